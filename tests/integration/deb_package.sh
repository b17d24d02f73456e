#!/usr/bin/env bash
# The Debian package, for real (issue 47 points 3 and 4): scripts/build-deb.sh
# builds it (CPack; lintian must report no error), then it is installed with
# apt into a fresh Debian 12 root made by debootstrap
# (scripts/make-debian-roots.sh, cached per machine; copied here, so each
# run starts fresh), where apt fetches its dependencies. Inside that root:
# `tasklens summary` on the bundled log prints what the build under test
# prints, `report` writes its page, the configuration is a conffile that an
# upgrade keeps, the `tasklens` system user owns /var/lib/tasklens, the unit
# names /usr/bin/tasklens, the man pages are there, and a purge leaves
# nothing of it behind.
#   deb_package.sh SOURCE_DIR TASKLENS DEMO_LOG
# Skips (77), saying why, where debootstrap cannot run (not root, no cached
# root) or the mirror cannot be reached.
set -u
src=$1 host_tl=$2 demo=$3
. "$(dirname "$0")/debian_root.sh"
fresh_root bookworm-minbase usr/bin/apt-get

if out=$(bash "$src/scripts/build-deb.sh" "$tmp/build" 2>&1); then
  deb=$(ls "$tmp"/build/tasklens_*.deb)
  ok "built $(basename "$deb"); lintian: no errors"
else
  echo "$out" | tail -20
  bad "build-deb.sh (or lintian) failed"
  echo "$pass checks passed, $fail failed"; exit 1
fi

# a root thrown away after the test: dpkg need not fsync every file it
# unpacks (on a disk the server tests keep busy, that took minutes)
echo 'force-unsafe-io' >"$root/etc/dpkg/dpkg.cfg.d/unsafe-io"
cp "$deb" "$root/tmp/tasklens.deb" && cp "$demo" "$root/tmp/demo.log"
if ! in_root apt-get update -qq >"$tmp/apt.log" 2>&1; then
  cat "$tmp/apt.log"; echo "SKIP: apt in the Debian root cannot reach its mirror"; exit 77
fi
if in_root apt-get install -y -qq /tmp/tasklens.deb >"$tmp/apt.log" 2>&1; then
  ok "apt-get install ./tasklens.deb in a fresh bookworm root (dependencies fetched)"
else
  tail -20 "$tmp/apt.log"; bad "apt-get install"
fi
for lib in libjansson4 libpcre2-8-0 libyaml-0-2 libmsgpackc2 libsqlite3-0 libsnappy1v5 libcurl4 librdkafka1; do
  in_root dpkg -s "$lib" >/dev/null 2>&1 || bad "$lib (a dependency or recommendation) not installed"
done
ok "Depends (from dpkg-shlibdeps) and Recommends (libcurl4, librdkafka1) installed"

"$host_tl" summary "$demo" >"$tmp/want.txt" 2>&1
if in_root tasklens summary /tmp/demo.log >"$tmp/got.txt" 2>&1 && [ -s "$tmp/want.txt" ] &&
   cmp -s "$tmp/want.txt" "$tmp/got.txt"; then
  ok "tasklens summary in the root prints what the build under test prints ($(grep -c '^category=' "$tmp/got.txt") categories)"
else
  diff "$tmp/want.txt" "$tmp/got.txt" | head; bad "summary inside the root"
fi
if in_root tasklens report -q -o /tmp/report.html /tmp/demo.log && grep -q "What right-sizing saves" "$root/tmp/report.html"; then
  ok "tasklens report writes its page"
else
  bad "report inside the root"
fi
if in_root tasklens check --config-only -c /etc/tasklens/tasklens.yaml >/dev/null 2>&1; then
  ok "/etc/tasklens/tasklens.yaml is a valid configuration"
else
  bad "the installed configuration does not validate"
fi
if in_root dpkg-query -W -f='${Conffiles}\n' tasklens | grep -q "^ /etc/tasklens/tasklens.yaml "; then
  ok "/etc/tasklens/tasklens.yaml is a conffile"
else
  bad "conffile: $(in_root dpkg-query -W -f='${Conffiles}' tasklens)"
fi
owner=$(in_root stat -c "%U:%G %a" /var/lib/tasklens 2>/dev/null)
if in_root getent passwd tasklens | grep -q "^tasklens:.*:/var/lib/tasklens:" && [ "$owner" = "tasklens:tasklens 750" ] &&
   [ "$(in_root stat -c "%G %a" /etc/tasklens/tasklens.yaml)" = "tasklens 640" ]; then
  ok "system user tasklens owns /var/lib/tasklens (750) and reads the configuration (640, group tasklens)"
else
  bad "user/ownership: $(in_root getent passwd tasklens) $owner"
fi
unit=$root/usr/lib/systemd/system/tasklens.service
if grep -q "^ExecStart=/usr/bin/tasklens run -c /etc/tasklens/tasklens.yaml$" "$unit" && grep -q "^User=tasklens$" "$unit"; then
  ok "the unit runs /usr/bin/tasklens as tasklens with /etc/tasklens/tasklens.yaml"
else
  bad "unit: $(grep -E '^(ExecStart|User)=' "$unit" 2>/dev/null)"
fi
if gzip -dc "$root/usr/share/man/man1/tasklens.1.gz" | grep -q '^\.TH' && [ -s "$root/usr/share/man/man5/tasklens.yaml.5.gz" ] &&
   [ -s "$root/usr/share/doc/tasklens/copyright" ]; then
  ok "man pages (tasklens.1, tasklens.yaml.5) and copyright in place"
else
  bad "man pages or copyright missing"
fi
n=$(find "$root/usr/share/tasklens/grafana/dashboards" -name '*.json' | wc -l)
[ "$n" -ge 3 ] && ok "$n dashboards under /usr/share/tasklens/grafana" || bad "dashboards: $n"

# an upgrade keeps the operator's configuration
echo "# edited by the operator" >>"$root/etc/tasklens/tasklens.yaml"
if in_root dpkg -i /tmp/tasklens.deb >"$tmp/dpkg.log" 2>&1 && tail -1 "$root/etc/tasklens/tasklens.yaml" | grep -q "edited by the operator"; then
  ok "reinstalling keeps an edited /etc/tasklens/tasklens.yaml"
else
  tail -5 "$tmp/dpkg.log"; bad "the edited configuration was not kept"
fi
if in_root dpkg --purge tasklens >"$tmp/dpkg.log" 2>&1 && [ ! -e "$root/usr/bin/tasklens" ] &&
   [ ! -e "$root/etc/tasklens/tasklens.yaml" ] && [ ! -e "$root/var/lib/tasklens" ]; then
  ok "purge removes the binary, the configuration and /var/lib/tasklens"
else
  tail -5 "$tmp/dpkg.log"; bad "purge left files"
fi
echo "$pass checks passed, $fail failed"
[ "$fail" = 0 ]

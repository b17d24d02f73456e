#!/usr/bin/env bash
# `cmake --install BUILD --prefix DIR` by a user without root (issue 47
# points 1 and 4): as `nobody` when the tests run as root, into a directory
# that user owns. Then, from DIR alone: the binary runs `summary` and
# `report` on the bundled log; the man pages are there and render; the
# example configuration is at DIR/etc/tasklens/tasklens.yaml and valid; the
# dashboards and provisioning files are under DIR/share/tasklens/grafana;
# the systemd unit names DIR's binary and configuration (and passes
# systemd-analyze verify where it exists).
#   install_prefix.sh BUILD_DIR DEMO_LOG
set -u
build=$1 demo=$2
fail=0 pass=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
dir=$tmp/prefix
as_user=()
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$dir" && chown nobody:nogroup "$dir"
  # the build tree is root's: the one file cmake --install writes there
  # (its manifest) is handed over, as a user's own build tree would be
  touch "$build/install_manifest.txt" && chown nobody:nogroup "$build/install_manifest.txt"
  as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
  # a clone in a private directory (mktemp -d is 0700) cannot be read by
  # nobody: then root installs, and the prefix is still checked from itself
  if ! "${as_user[@]}" test -r "$build/cmake_install.cmake"; then
    echo "note: $build is not readable by nobody (a private clone): installing as root"
    as_user=()
  fi
else
  mkdir -p "$dir"
fi
if out=$("${as_user[@]}" cmake --install "$build" --prefix "$dir" 2>&1); then
  ok "cmake --install --prefix as $("${as_user[@]}" id -un)"
else
  bad "cmake --install: ${out: -400}"
fi
tl=$dir/bin/tasklens
if [ -x "$tl" ] && "$tl" summary "$demo" >"$tmp/summary.txt" 2>&1 && grep -q "^category=compute" "$tmp/summary.txt"; then
  ok "the installed binary runs summary on the bundled log"
else
  bad "summary from the prefix: $(tail -c 300 "$tmp/summary.txt" 2>/dev/null)"
fi
if "$tl" report -q -o "$tmp/report.html" "$demo" && grep -q "What right-sizing saves" "$tmp/report.html"; then
  ok "and report"
else
  bad "report from the prefix"
fi
for page in man1/tasklens.1.gz man5/tasklens.yaml.5.gz; do
  f=$dir/share/man/$page
  if [ -s "$f" ] && gzip -dc "$f" | head -5 | grep -q '^\.TH'; then
    if command -v man >/dev/null 2>&1; then
      if MANWIDTH=80 man -l "$f" 2>/dev/null | grep -q "tasklens"; then ok "man -l $page renders"; else bad "man -l $page"; fi
    else
      ok "$page installed (man not here to render it)"
    fi
  else
    bad "no man page $page"
  fi
done
cfg=$dir/etc/tasklens/tasklens.yaml
if [ -s "$cfg" ] && "$tl" check --config-only -c "$cfg" >/dev/null 2>&1; then
  ok "the example configuration at etc/tasklens/tasklens.yaml is valid"
else
  bad "configuration at $cfg"
fi
n=$(find "$dir/share/tasklens/grafana/dashboards" -name '*.json' 2>/dev/null | wc -l)
p=$(find "$dir/share/tasklens/grafana/provisioning" -name '*.yaml' 2>/dev/null | wc -l)
if [ "$n" -ge 3 ] && [ "$p" -ge 2 ]; then ok "$n dashboards and $p provisioning files under share/tasklens/grafana"; else bad "dashboards $n, provisioning $p"; fi
unit=$dir/lib/systemd/system/tasklens.service
if [ -s "$unit" ] && grep -q "^ExecStart=$tl run -c $cfg\$" "$unit" && ! grep -q "/usr/local" "$unit"; then
  ok "the unit names the prefix's binary and configuration"
else
  bad "unit: $(grep ExecStart "$unit" 2>/dev/null)"
fi
if command -v systemd-analyze >/dev/null 2>&1; then
  if out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$unit" 2>&1) && ! grep -qi "tasklens.service" <<<"$out"; then
    ok "systemd-analyze verify of the installed unit"
  else
    bad "systemd-analyze verify: $out"
  fi
fi
echo "$pass checks passed, $fail failed"
[ "$fail" = 0 ]

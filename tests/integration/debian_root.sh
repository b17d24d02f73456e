# Sourced by the tests that work in a fresh Debian root (deb_package.sh,
# minimal_build.sh): `fresh_root NAME PROBE` skips (77), saying why, without
# root or without the cached root ~/.cache/tasklens/NAME (made by
# scripts/make-debian-roots.sh; PROBE is a file it must hold), else copies
# it to $root (removed, with its /proc, at exit). ok/bad count checks;
# in_root runs a command inside with a clean environment.
fail=0 pass=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive "$@"; }
fresh_root() {
  local base=${TASKLENS_CACHE:-$HOME/.cache/tasklens}/$1
  if [ "$(id -u)" != 0 ]; then echo "SKIP: chroot needs root"; exit 77; fi
  if [ ! -e "$base/$2" ]; then
    echo "SKIP: no Debian root at $base (scripts/make-debian-roots.sh makes it; debootstrap could not run)"
    exit 77
  fi
  tmp=$(mktemp -d /var/tmp/tasklens-root.XXXXXX)
  root=$tmp/root
  trap 'umount "$root/proc" 2>/dev/null; rm -rf "$tmp"' EXIT
  cp -a --reflink=auto "$base" "$root" && mount -t proc proc "$root/proc"
}

#!/usr/bin/env bash
# Two fresh Debian 12 (bookworm) roots for the package tests, made once per
# machine with debootstrap and kept in ~/.cache/tasklens (like InfluxDB 2.7):
#   bookworm-minbase   a bare system: the .deb is installed there (apt fetches
#                      its dependencies), tests/integration/deb_package.sh
#   bookworm-build     the same plus only what a minimal build needs (compiler,
#                      make, cmake, pkg-config and the core's five -dev
#                      packages), tests/integration/minimal_build.sh
# About 30 s and 210 MB for the first, 60 s and 420 MB for the second, on a
# first run; nothing later. Needs root (chroot) and debootstrap; without
# them the package tests skip, saying so.
set -euo pipefail
cache=${TASKLENS_CACHE:-$HOME/.cache/tasklens}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# the minimal build's packages: the list install-deps.sh installs for it
core_build=$(bash "$(dirname "$0")/install-deps.sh" --list core | tr " " ,)
if [ "$(id -u)" != 0 ] || ! command -v debootstrap >/dev/null 2>&1; then
  echo "make-debian-roots: needs root and debootstrap; the package tests will skip" >&2
  exit 0
fi
make_root() { # NAME [--include=...]
  local dir=$cache/$1
  [ -x "$dir/usr/bin/apt-get" ] && return 0
  echo "make-debian-roots: debootstrap bookworm into $dir (once per machine)"
  rm -rf "$dir.tmp"
  mkdir -p "$cache"
  if debootstrap --variant=minbase "${@:2}" bookworm "$dir.tmp" "$mirror" >"$cache/$1.log" 2>&1; then
    rm -rf "$dir.tmp/var/cache/apt/archives/"*.deb
    mv "$dir.tmp" "$dir"
  else
    echo "make-debian-roots: debootstrap failed (see $cache/$1.log); the package tests will skip" >&2
    rm -rf "$dir.tmp"
  fi
}
make_root bookworm-minbase
make_root bookworm-build --include=$core_build

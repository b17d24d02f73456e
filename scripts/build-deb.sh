#!/usr/bin/env bash
# Builds the Debian package: a Release build installed under /usr (so the
# configuration lands in /etc/tasklens), packaged by CPack with the control
# files of deploy/debian/, then checked by lintian when it is installed.
#   scripts/build-deb.sh [BUILD_DIR]     -> BUILD_DIR/tasklens_VERSION_ARCH.deb
# Needs what the build needs plus dpkg-dev (dpkg-shlibdeps) and file.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-deb}
# Debian's own compiler and linker flags (hardening: fortify, stack
# protector, relro, bindnow), as a package built by debhelper gets them
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)" \
LDFLAGS=$(dpkg-buildflags --get LDFLAGS) \
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DTL_TESTS=OFF >/dev/null
cmake --build "$build" >/dev/null
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls -t "$build"/tasklens_*.deb | head -1)
echo "$deb"
if command -v lintian >/dev/null 2>&1; then
  lintian --fail-on error "$deb"
fi

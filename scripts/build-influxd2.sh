#!/usr/bin/env bash
# Builds a real InfluxDB 2.7 server (influxd) once per machine, for the tests
# that write to InfluxDB 2.x. Debian ships only 1.x; the Go module proxy has
# influxdb v2.7.12, whose libflux (Rust) cargo builds from crates.io.
#
#   bash scripts/build-influxd2.sh        # prints the binary's path
#
# The binary lands in $TL_INFLUXD2_CACHE (default ~/.cache/tasklens/influxdb-2.7.12)
# with a `complete` marker; a second run only prints the path. The first run
# takes about 5 minutes on two cores (flux's Rust and influxd's Go; 289 s measured
# from empty Go and cargo caches) and needs
# ~3 GB of disk under the Go caches. Facts this relies on:
# - `go install` refuses influxdb (its go.mod has replace directives), so a
#   small main module copies its go.mod under another module name and builds
#   the package .../cmd/influxd from it;
# - cgo finds libflux through influxdata's pkg-config wrapper, which builds it
#   with cargo; flux pins rustc 1.72 (not installable offline): the stable
#   toolchain builds it without flux's default "strict" feature, which turns
#   the warnings newer compilers raise into errors (lints only). The wrapper
#   builds a writable copy of libflux under the Go build cache; this script
#   makes that copy first, with "strict" left out of the default features.
set -euo pipefail
VERSION=2.7.12
CACHE=${TL_INFLUXD2_CACHE:-$HOME/.cache/tasklens/influxdb-$VERSION}
if [ -x "$CACHE/influxd" ] && [ -e "$CACHE/complete" ]; then
  echo "$CACHE/influxd"; exit 0
fi
for tool in go cargo gcc; do
  command -v "$tool" >/dev/null || { echo "build-influxd2: $tool is needed (go from golang-go, cargo from rustup or Debian's cargo)" >&2; exit 1; }
done
mkdir -p "$CACHE"
work=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
log="$CACHE/build.log"
echo "build-influxd2: building influxd $VERSION into $CACHE (about 5 minutes on two cores, once per machine; log: $log)" >&2
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
export RUSTUP_TOOLCHAIN=${RUSTUP_TOOLCHAIN:-stable}
# The wrapper's copy of flux (GOCACHE/pkgconfig/MODULE@VERSION), made here so
# that the "strict" feature can be taken out of its default features.
prepare_libflux() {
  local version=$1 src dst
  src=$(go mod download -json "github.com/influxdata/flux@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  dst="$(go env GOCACHE)/pkgconfig/github.com/influxdata/flux@$version"
  if [ ! -e "$dst/.tasklens-prepared" ]; then
    rm -rf "$dst"; mkdir -p "$(dirname "$dst")"
    cp -r "$src" "$dst"; chmod -R u+w "$dst"
    sed -i 's/^default = \["strict", /default = [/; s/^default = \["strict"\]/default = []/' \
      "$dst/libflux/flux/Cargo.toml" "$dst/libflux/flux-core/Cargo.toml"
    touch "$dst/.tasklens-prepared"
  fi
}
{
  gobin="$work/bin"
  GOBIN="$gobin" go install github.com/influxdata/pkg-config@v0.2.14
  export PATH="$gobin:$PATH"
  moddir=$(go mod download -json "github.com/influxdata/influxdb/v2@v$VERSION" |
           sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  cd "$work"
  sed 's#^module github.com/influxdata/influxdb/v2$#module tasklens.local/influxd2build#' \
    "$moddir/go.mod" >go.mod
  cp "$moddir/go.sum" go.sum
  printf '\nrequire github.com/influxdata/influxdb/v2 v%s\n' "$VERSION" >>go.mod
  printf 'package influxd2build\n\nimport _ "github.com/influxdata/influxdb/v2/cmd/influxd"\n' >tools.go
  go mod download github.com/influxdata/influxdb/v2
  prepare_libflux "$(sed -n 's#^\tgithub.com/influxdata/flux \(v[^ ]*\)$#\1#p' go.mod)"
  go build -trimpath -o "$work/influxd" github.com/influxdata/influxdb/v2/cmd/influxd
} >"$log" 2>&1 || { echo "build-influxd2: the build failed; the last lines of $log:" >&2; tail -30 "$log" >&2; exit 1; }
mv "$work/influxd" "$CACHE/influxd"
"$CACHE/influxd" version >>"$log" 2>&1 || true
touch "$CACHE/complete"
echo "$CACHE/influxd"

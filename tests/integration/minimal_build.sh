#!/usr/bin/env bash
# The minimal build (issue 47 point 2): in a fresh Debian 12 root holding
# only the compiler, make, cmake, pkg-config and the core's -dev packages
# (scripts/make-debian-roots.sh: no librdkafka, libcurl, msgpack, SQLite or
# snappy headers), the source configures with TL_KAFKA, TL_HTTP_SINKS,
# TL_DASF and TL_PARSL off, builds with -Werror, and the binary runs
# `summary`, `records` and `report` on the bundled log, printing what the
# full build under test prints. `version` says what was left out, and a
# configuration naming Kafka or InfluxDB is refused saying why. And the
# README's first command (scripts/quickstart.sh) works there as it is.
#   minimal_build.sh SOURCE_DIR TASKLENS DEMO_LOG
# Skips (77), saying why, where debootstrap could not run.
set -u
src=$1 host_tl=$2 demo=$3
. "$(dirname "$0")/debian_root.sh"
fresh_root bookworm-build usr/bin/cmake
mkdir -p "$root/src"
tar -C "$src" --exclude='./build*' --exclude=./.git --exclude='./bench/out' -cf - . | tar -C "$root/src" -xf -
cp "$demo" "$root/tmp/demo.log"
absent=0
for dev in librdkafka-dev libcurl4-openssl-dev libcurl4-gnutls-dev libmsgpack-dev libsqlite3-dev libsnappy-dev; do
  in_root dpkg -s "$dev" >/dev/null 2>&1 && bad "$dev is installed in the build root" || absent=$((absent + 1))
done
[ "$absent" = 6 ] && ok "the root has none of the optional parts' headers (librdkafka, libcurl, msgpack, sqlite, snappy)"
if in_root cmake -S /src -B /build -DTL_KAFKA=OFF -DTL_HTTP_SINKS=OFF -DTL_DASF=OFF -DTL_PARSL=OFF \
     -DTL_WERROR=ON >"$tmp/cmake.log" 2>&1 &&
   in_root cmake --build /build -j "$(nproc)" >>"$tmp/cmake.log" 2>&1; then
  ok "configured and built with TL_KAFKA, TL_HTTP_SINKS, TL_DASF, TL_PARSL off (-Werror)"
else
  tail -30 "$tmp/cmake.log"; bad "minimal build failed"
  echo "$pass checks passed, $fail failed"; exit 1
fi
grep -q "TL_KAFKA=OFF: no \`kafka\` source" "$tmp/cmake.log" && ok "cmake said what TL_KAFKA=OFF removes" ||
  bad "cmake did not say what the options remove"
tl=/build/cli/tasklens
for cmd in summary records; do
  "$host_tl" $cmd "$demo" >"$tmp/want.$cmd" 2>&1
  if in_root $tl $cmd /tmp/demo.log >"$tmp/got.$cmd" 2>&1 && [ -s "$tmp/want.$cmd" ] && cmp -s "$tmp/want.$cmd" "$tmp/got.$cmd"; then
    ok "$cmd prints what the full build prints ($(wc -l <"$tmp/got.$cmd") lines)"
  else
    diff "$tmp/want.$cmd" "$tmp/got.$cmd" | head; bad "$cmd differs from the full build"
  fi
done
if in_root $tl report -q -o /tmp/report.html /tmp/demo.log && grep -q "What right-sizing saves" "$root/tmp/report.html"; then
  ok "report writes its page"
else
  bad "report in the minimal build"
fi
libs=$(in_root ldd $tl)
if ! grep -Eq "curl|rdkafka|msgpack|sqlite|snappy" <<<"$libs"; then ok "links $(grep -c '=>' <<<"$libs") libraries, none of the optional ones"; else bad "links: $libs"; fi
if in_root $tl version | grep -q "Kafka source *left out (TL_KAFKA)"; then ok "version says what this build left out"; else bad "version: $(in_root $tl version)"; fi
# the README's first command, as a newcomer runs it on such a machine
if in_root bash -c 'cd /src && bash scripts/quickstart.sh' >"$tmp/quick.log" 2>&1 &&
   grep -q "^category=compute" "$tmp/quick.log" && [ -s "$root/src/build-quick/demo-report.html" ]; then
  ok "scripts/quickstart.sh (the README's first command) prints the summary and writes the report"
else
  tail -20 "$tmp/quick.log"; bad "quickstart.sh in the build root"
fi
cp "$src/deploy/examples/kafka-consumer.yaml" "$root/tmp/k.yaml"
out=$(in_root $tl check -c /tmp/k.yaml 2>&1)
if grep -q "built without Kafka (rebuild with cmake -DTL_KAFKA=ON" <<<"$out" && grep -q "built without HTTP sinks" <<<"$out"; then
  ok "a configuration naming Kafka and InfluxDB is refused, saying which option brings them back"
else
  bad "check: $out"
fi
echo "$pass checks passed, $fail failed"
[ "$fail" = 0 ]

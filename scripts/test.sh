#!/usr/bin/env bash
# Installs what is needed (and builds InfluxDB 2.7 once per machine) and runs
# every test twice: a -Werror build, then an
# AddressSanitizer + UndefinedBehaviorSanitizer build (clang) that also runs
# the libFuzzer target for a minute. Real samples come from ../shared (tests
# that need them say SKIP when it is absent).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# A real InfluxDB 2.7 for the 2.x tests: built once per machine (about 5
# minutes the first time, then cached under ~/.cache/tasklens), before any
# timed test.
bash scripts/build-influxd2.sh
# Two fresh Debian 12 roots for the package and minimal-build tests
# (debootstrap, once per machine: about 80 s, then cached).
bash scripts/make-debian-roots.sh
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build (gcc, -Werror)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTL_WERROR=ON -DTL_TESTS=ON >/dev/null
cmake --build build
echo "== tests (gcc, -Werror)"
(cd build && ctest --output-on-failure -j "$jobs")

echo "== build (clang, ThreadSanitizer): the threads of batch reading"
# Only the program, and the one test of its threads (the other tests run
# twice below); TSan and ASan cannot share a build.
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DTL_WERROR=ON -DTL_TSAN=ON >/dev/null
cmake --build build-tsan --target tasklens
echo "== threads under ThreadSanitizer"
TSAN_OPTIONS=halt_on_error=1:exitcode=66 /usr/bin/python3 tests/integration/threads_same.py \
  build-tsan/cli/tasklens "${TL_SHARED_DIR:-$(cd .. && pwd)/shared}"

echo "== build (clang, ASan + UBSan, fuzzers)"
# Say plainly when the sanitizer runtimes are missing, before ninja fails on
# the first link with a path deep inside llvm.
probe=$(mktemp -d)
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}\n' >"$probe/p.c"
if ! clang -fsanitize=address,undefined,fuzzer "$probe/p.c" -o "$probe/p" 2>"$probe/err"; then
  echo "test.sh: clang cannot link ASan/UBSan/libFuzzer programs (is libclang-rt-N-dev installed?):" >&2
  cat "$probe/err" >&2; rm -rf "$probe"; exit 1
fi
rm -rf "$probe"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
  -DTL_WERROR=ON -DTL_SANITIZE=ON -DTL_FUZZ=ON >/dev/null
cmake --build build-asan
echo "== tests (clang, ASan + UBSan)"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j "$jobs")

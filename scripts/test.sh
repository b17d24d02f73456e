#!/usr/bin/env bash
# Installs what is needed and runs every test twice: a -Werror build, then an
# AddressSanitizer + UndefinedBehaviorSanitizer build (clang) that also runs
# the libFuzzer target for a minute. Real samples come from ../shared (tests
# that need them say SKIP when it is absent).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build (gcc, -Werror)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTL_WERROR=ON -DTL_TESTS=ON >/dev/null
cmake --build build
echo "== tests (gcc, -Werror)"
(cd build && ctest --output-on-failure -j "$jobs")

echo "== build (clang, ASan + UBSan, fuzzers)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
  -DTL_WERROR=ON -DTL_SANITIZE=ON -DTL_FUZZ=ON >/dev/null
cmake --build build-asan
echo "== tests (clang, ASan + UBSan)"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j "$jobs")

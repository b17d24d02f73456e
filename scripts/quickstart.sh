#!/usr/bin/env bash
# The main job with only what it needs: installs the compiler, cmake and the
# core's five libraries (install-deps.sh core), builds tasklens without the
# optional parts (Kafka, the HTTP sinks, DASF, Parsl: README "Build
# options"), summarizes the bundled real Work Queue log and writes its HTML
# report. No server, no test stack.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh core
cmake -S . -B build-quick -DCMAKE_BUILD_TYPE=Release -DTL_TESTS=OFF \
  -DTL_KAFKA=OFF -DTL_HTTP_SINKS=OFF -DTL_DASF=OFF -DTL_PARSL=OFF >/dev/null
cmake --build build-quick -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
./build-quick/cli/tasklens summary tests/data/wq/demo-cctools-9.9.log
./build-quick/cli/tasklens report -q tests/data/wq/demo-cctools-9.9.log -o build-quick/demo-report.html
echo "tasklens: the same run as a page: build-quick/demo-report.html (open it in any browser)"

#!/usr/bin/env bash
# Installs what is needed, builds tasklens, summarizes the bundled real Work
# Queue log and writes its HTML report (no server needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTL_TESTS=OFF >/dev/null
cmake --build build >/dev/null
./build/cli/tasklens summary tests/data/wq/demo-cctools-9.9.log
./build/cli/tasklens report -q tests/data/wq/demo-cctools-9.9.log -o build/demo-report.html
echo "tasklens: the same run as a page: build/demo-report.html (open it in any browser)"

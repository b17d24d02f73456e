#!/usr/bin/env bash
# Builds a large Work Queue / TaskVine log by concatenating the real samples
# in ../shared/wq/samples and the bundled real cctools log (a run with a
# memory-exhaustion task, tests/data/wq), each copy's manager pids suffixed
# with the copy number so every run stays distinct (task ids restart per run).
#   bench/make_wq_mix.sh OUT [MIN_BYTES [COPIES]]
# Copies are added until OUT has MIN_BYTES (default 1 GiB) and COPIES.
set -euo pipefail
out=$1
min=${2:-1073741824}
copies=${3:-1}
here=$(cd "$(dirname "$0")" && pwd)
samples=${TL_SHARED_DIR:-$here/../../shared}/wq/samples
files=("$samples"/*tr* "$samples"/*transaction* "$samples"/*.log "$here/../tests/data/wq/demo-cctools-9.9.log")
[ -f "${files[0]}" ] || { echo "no samples in $samples" >&2; exit 1; }
: >"$out"
k=0
while [ "$(stat -c %s "$out")" -lt "$min" ] || [ "$k" -lt "$copies" ]; do
  k=$((k + 1))
  suffix=$(printf '%04d' "$k")
  for f in $(printf '%s\n' "${files[@]}" | sort -u); do
    sed -E "s/^([0-9]+) ([0-9]+) /\\1 \\2$suffix /" "$f" >>"$out"
  done
done
echo "$out: $(stat -c %s "$out") bytes, $(wc -l <"$out") lines, $k copies"

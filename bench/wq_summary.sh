#!/usr/bin/env bash
# `tasklens summary` throughput on a >= 1 GB mix of the real Work Queue /
# TaskVine samples, beside `cat` and `wc -l` on the same file in the same
# run, interleaved (A B C A B C ...), median of 3, warm cache.
#   bench/wq_summary.sh [BUILD_DIR] [MIN_BYTES]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
min=${2:-1073741824}
tl=$build/cli/tasklens
log=$here/out/mix-$min.log
mkdir -p "$here/out"
[ -f "$log" ] || "$here/make_wq_mix.sh" "$log" "$min"
bytes=$(stat -c %s "$log")
lines=$(wc -l <"$log")
cat "$log" >/dev/null # warm the page cache
declare -A T
run() { # name command...
    local name=$1; shift
    /usr/bin/time -o "$here/out/time.txt" -f "%e %M" "$@" >/dev/null 2>&1
    T[$name]+="$(tail -1 "$here/out/time.txt");"
}
for i in 1 2 3; do
    run tasklens "$tl" summary --format json "$log"
    run wc wc -l "$log"
    run cat cat "$log"
done
median() { tr ';' '\n' | sed '/^$/d' | sort -n | sed -n 2p; }
echo "input: $log"
echo "size: $bytes bytes, $lines lines; CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
printf '%-10s %9s %12s %9s %10s\n' tool seconds lines/s MB/s peakRSS_MB
for name in tasklens wc cat; do
    m=$(echo "${T[$name]}" | median)
    s=${m% *}; rss=${m#* }
    awk -v n="$name" -v s="$s" -v l="$lines" -v b="$bytes" -v r="$rss" \
        'BEGIN { printf "%-10s %9.2f %12.0f %9.0f %10.1f\n", n, s, l / s, b / s / 1e6, r / 1024 }'
done
echo "runs (s peakKB): $(declare -p T | sed 's/declare -A T=//')"

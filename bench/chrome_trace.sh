#!/usr/bin/env bash
# Chrome traces: MB/s and peak RSS for tasklens beside `python3 -c json.load`
# on the same file in the same run (warm cache, interleaved A B A B, 3 runs,
# median and min-max), on
#   - the 53.7 MB hta_df_index_resolver trace, decompressed;
#   - a >= 1 GB array-form concatenation of its events (26 copies).
# Also the parser alone (bench/chrome_bench: in memory, no I/O) vs Jansson
# per event.
# usage: bench/chrome_trace.sh BUILD_DIR   (configured with -DTL_BENCH=ON)
set -euo pipefail
B=${1:-build}
TL=$B/cli/tasklens
SHARED=$(dirname "$0")/../../shared
OUT=$(dirname "$0")/out
mkdir -p "$OUT"
hta=$OUT/hta.json
big=$OUT/hta-x26-array.json
[ -s "$hta" ] || gzip -dc "$SHARED/chrome/samples/hta_df_index_resolver.json.gz" > "$hta"
if [ ! -s "$big" ]; then
  /usr/bin/python3 - "$hta" "$big" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
lines = [json.dumps(e, separators=(",", ":")) for e in events]
with open(sys.argv[2], "w") as f:
    f.write("[\n")
    for k in range(26):
        f.write(",\n".join(lines))
        f.write(",\n" if k < 25 else "\n]\n")
PY
fi
echo "# $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
run() { # label file cmd...: prints "label seconds maxrss_kb"
  local label=$1 f=$2; shift 2
  /usr/bin/time -f "%e %M" -o "$OUT/time.txt" "$@" > /dev/null 2>&1
  echo "$label $(cat "$OUT/time.txt")"
}
for f in "$hta" "$big"; do
  size=$(stat -c %s "$f")
  cat "$f" > /dev/null
  echo "## $(basename "$f") $size bytes"
  for k in 1 2 3; do
    run summary-approx "$f" "$TL" summary --approx --format-in chrome "$f"
    run python-json.load "$f" /usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f"
    run summary-exact "$f" "$TL" summary --format-in chrome "$f"
    run lines "$f" "$TL" lines --format-in chrome -o /dev/null "$f"
  done | /usr/bin/python3 -c '
import sys, statistics, collections
size = int(sys.argv[1]); r = collections.defaultdict(list)
for line in sys.stdin:
    label, s, kb = line.split(); r[label].append((float(s), int(kb)))
print("| command | s (median, min-max) | MB/s | peak RSS MB |")
print("|---|---|---|---|")
for label, v in r.items():
    t = sorted(x[0] for x in v); m = statistics.median(t)
    print("| %s | %.2f (%.2f-%.2f) | %.0f | %.0f |" % (label, m, t[0], t[-1], size / 1e6 / m,
          max(x[1] for x in v) / 1024))
' "$size"
  "$B/bench/chrome_bench" "$f"
done

#!/usr/bin/env bash
# summary's memory stays bounded on a large input: 2 million synthetic tasks
# (10 million lines, bench/gen_wq) piped through stdin. Every task must be
# counted, and peak RSS must stay under 200 MB (not checked under the
# sanitizers, whose shadow memory inflates RSS).
# usage: summary_memory.sh TASKLENS GEN_WQ SANITIZED(0|1)
set -u
TL=$1 GEN=$2 SAN=$3
tmp=$(mktemp -d /tmp/tl-mem-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=2000000
"$GEN" $n 4 | /usr/bin/time -o "$tmp/time" -f "%M" "$TL" summary --format json - >"$tmp/out.json"
rss_kb=$(tail -1 "$tmp/time")
fail=0
python3 - "$tmp/out.json" $n <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
tasks = sum(g["tasks"] for g in d["groups"])
assert tasks == n, (tasks, n)
assert d["inputs"][0]["rejected"] == 0
PY
echo "2M tasks: peak RSS $((rss_kb / 1024)) MB"
if [ "$SAN" = 0 ] && [ "$rss_kb" -gt $((200 * 1024)) ]; then echo "FAIL: RSS above 200 MB"; fail=1; fi
[ $fail = 0 ] && echo "summary_memory: 1 passed, 0 failed" || echo "summary_memory: 0 passed, 1 failed"
exit $fail

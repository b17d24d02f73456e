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

# cardinality: 200,000 categories, a new name per task (as TaskVine's
# `<function f at 0x7f...>` names change every run). `lines` (InfluxDB's
# series) and `summary --max-groups` keep at most their cap of names, put
# the rest in _other, count it and say so; memory stays bounded.
"$GEN" 200000 200000 >"$tmp/card.log"
/usr/bin/time -o "$tmp/time2" -f "%M" "$TL" lines --window 0 -o "$tmp/card.lp" "$tmp/card.log" 2>"$tmp/card.err"
rss2_kb=$(tail -1 "$tmp/time2")
"$TL" summary --max-groups 5000 --format json "$tmp/card.log" >"$tmp/card.json" 2>/dev/null
python3 - "$tmp/card.lp" "$tmp/card.err" "$tmp/card.json" <<'PY' || fail=1
import json, re, sys
cats, other, tasks, selfm = set(), 0, 0, ""
for line in open(sys.argv[1]):
    if line.startswith("task,"):
        tasks += 1
        c = re.search(r",category=([^,]*)", line).group(1)
        cats.add(c)
        other += c == "_other"
    elif line.startswith("tasklens,"):
        selfm = line
err = open(sys.argv[2]).read()
assert tasks == 200000 and len(cats) == 10001 and other == 190000, (tasks, len(cats), other)
assert "other_points=190000i" in selfm and "agg_overflow_records=190000i" in selfm, selfm
assert err.count("more than 10000 categories") == 1, err
d = json.load(open(sys.argv[3]))
assert len(d["groups"]) == 5001 and d["overflow_records"] == 195000 and d["max_groups"] == 5000
assert sum(g["tasks"] for g in d["groups"]) == 200000
PY
echo "200k categories: lines peak RSS $((rss2_kb / 1024)) MB"
if [ "$SAN" = 0 ] && [ "$rss2_kb" -gt $((200 * 1024)) ]; then echo "FAIL: RSS above 200 MB"; fail=1; fi
[ $fail = 0 ] && echo "summary_memory: 2 passed, 0 failed" || echo "summary_memory: failed"
exit $fail

#!/usr/bin/env bash
# `tasklens summary` as a user meets it: exit codes, error messages, stdin,
# compressed inputs, the JSON contract, CSV columns, table width.
# usage: cli_summary.sh TASKLENS DATA_DIR
set -u
TL=$1
DATA=$2
LOG=$DATA/wq/demo-cctools-9.9.log
tmp=$(mktemp -d /tmp/tl-cli-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect_exit() { # expected-code description command...
    local want=$1 what=$2; shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" = "$want" ]; then ok; else bad "$what: exit $got, want $want"; cat "$tmp/err"; fi
}

expect_exit 2 "no arguments" "$TL"
expect_exit 2 "summary without input" "$TL" summary
expect_exit 2 "bad --format" "$TL" summary --format xml "$LOG"
expect_exit 2 "bad --quantiles" "$TL" summary --quantiles 0.5,2 "$LOG"
expect_exit 2 "bad --metrics" "$TL" summary --metrics nope "$LOG"
expect_exit 2 "bad -O" "$TL" summary -O wq.max_line=lots "$LOG"
expect_exit 0 "help" "$TL" summary --help

expect_exit 1 "missing file" "$TL" summary "$tmp/nope.log"
grep -q "$tmp/nope.log" "$tmp/err" && ok || bad "missing file not named in the error"

# one good and one missing input: exit 1, but the good one is still summarized
expect_exit 1 "good + missing" "$TL" summary --format json "$LOG" "$tmp/nope.log"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert sum(g["tasks"] for g in d["groups"]) == 207' \
    "$tmp/out" && ok || bad "good input not summarized next to a missing one"

# not a format we know
head -c 3000 /dev/urandom | base64 >"$tmp/random.txt"
expect_exit 1 "unrecognized format" "$TL" summary "$tmp/random.txt"
grep -q "format not recognized" "$tmp/err" && ok || bad "no 'format not recognized' message"

# rejected lines: reported as file:line, exit 0; --strict makes it 1
{ head -n 40 "$LOG"; echo "1795302000999999 6045 TASK 5 DONE SUCCESS  0  {} {\"memory\":[oops"; tail -n +41 "$LOG"; } >"$tmp/bad.log"
expect_exit 0 "rejected line without --strict" "$TL" summary "$tmp/bad.log"
grep -q "^$tmp/bad.log:41: malformed JSON" "$tmp/err" && ok || { bad "rejected line not reported as file:line"; cat "$tmp/err"; }
expect_exit 1 "rejected line with --strict" "$TL" summary --strict "$tmp/bad.log"
expect_exit 0 "--quiet" "$TL" summary --quiet "$tmp/bad.log"
[ ! -s "$tmp/err" ] && ok || bad "--quiet still printed"

# values no measurement has (a negative wall time, a memory past the double
# range): each line rejected with file:line, the task kept without the value
sed -e '232s/"wall_time":\[0.004144/"wall_time":[-1.5/' -e '241s/"memory":\[3,"MB"\]/"memory":[1e400,"MB"]/' \
    "$LOG" >"$tmp/impossible.log"
expect_exit 0 "impossible values" "$TL" summary --format json "$tmp/impossible.log"
grep -q "^$tmp/impossible.log:232: impossible resource value (wall_time_s=-1.5)" "$tmp/err" &&
    grep -q "^$tmp/impossible.log:241: impossible resource value (max_rss_bytes=inf)" "$tmp/err" &&
    ok || { bad "impossible values not reported as file:line"; cat "$tmp/err"; }
mv "$tmp/out" "$tmp/impossible.json"
"$TL" summary --format json "$LOG" >"$tmp/clean.json" 2>/dev/null
"$TL" lines --window 0 -o "$tmp/impossible.lp" "$tmp/impossible.log" 2>/dev/null
python3 - "$tmp/impossible.json" "$tmp/clean.json" "$tmp/impossible.lp" <<'PY' && ok || bad "impossible values counted or written"
import json, sys
bad, clean = (json.load(open(f)) for f in sys.argv[1:3])
assert bad["inputs"][0]["rejected_by"] == {"bad_value": 2}, bad["inputs"][0]
b = {g["key"]["category"]: g for g in bad["groups"]}["odd name"]
c = {g["key"]["category"]: g for g in clean["groups"]}["odd name"]
assert b["tasks"] == c["tasks"]  # the tasks stay
assert b["metrics"]["max_rss_bytes"]["count"] == c["metrics"]["max_rss_bytes"]["count"] - 1
tasks, t206 = 0, None
for line in open(sys.argv[3]):
    if not line.startswith("task,"):
        continue
    tasks += 1
    fields = dict(kv.split("=", 1) for kv in line.rsplit(" ", 2)[1].split(","))
    for k, v in fields.items():
        if v[-1] == "i" or v in ("true", "false"):
            continue
        assert float(v) >= 0 and float(v) < float("inf"), (k, v)
    if fields["task_id"] == "206i":
        t206 = fields
assert tasks == 207, tasks
# task 206's measured wall time is gone; its lifecycle's stands in, as for
# any task measured without one
assert t206["wall_time_s"] == t206["exec_time_s"], t206
wb, wc = b["metrics"]["wall_time_s"], c["metrics"]["wall_time_s"]
assert wb["count"] == wc["count"] and wb["min"] >= 0
assert abs(wb["sum"] - (wc["sum"] - 0.004144 + float(t206["exec_time_s"]))) < 1e-9, (wb["sum"], wc["sum"])
assert abs(b["wall_hours"] * 3600 - wb["sum"]) < 1e-9
PY

# lines: every point once (a workflow point was written twice by a
# change that touched the record callback)
dups=$("$TL" lines -q "$LOG" | sort | uniq -d | wc -l)
[ "$dups" = 0 ] && ok || bad "lines wrote $dups points twice"

# the JSON contract
"$TL" summary --format json "$LOG" >"$tmp/ref.json" || bad "json run failed"
python3 - "$tmp/ref.json" <<'PY' && ok || bad "JSON contract"
import json, sys
d = json.load(open(sys.argv[1]))
i = d["inputs"][0]
assert set(["path", "format", "lines", "records", "rejected"]) <= set(i), i
assert i["format"] == "wq" and i["rejected"] == 0 and i["lines"] > 1000
g = {x["key"]["category"]: x for x in d["groups"]}
assert g["short"]["tasks"] == 70 and g["short"]["attempts"] == 70 and g["short"]["results"] == {"SUCCESS": 70}
m = g["compute"]["metrics"]["wall_time_s"]
assert list(m["quantiles"]) == ["0", "0.01", "0.05", "0.32", "0.5", "0.68", "0.95", "0.99", "1"], list(m["quantiles"])
for k in ("count", "sum", "min", "max", "mean"):
    assert k in m
assert m["quantiles"]["0"] == m["min"] and m["quantiles"]["1"] == m["max"]
assert abs(g["compute"]["wall_hours"] - m["sum"] / 3600) < 1e-15
for x in d["groups"]:
    for name, mm in x["metrics"].items():
        assert mm["approx"] is False
PY

# stdin, gzip and zstd give the same groups
cat "$LOG" | "$TL" summary --format json - >"$tmp/stdin.json"
gzip -c "$LOG" >"$tmp/log.gz"; "$TL" summary --format json "$tmp/log.gz" >"$tmp/gz.json"
zstd -q -c "$LOG" >"$tmp/log.bin"; "$TL" summary --format json "$tmp/log.bin" >"$tmp/zst.json"
for v in stdin gz zst; do
    python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["groups"]; b=json.load(open(sys.argv[2]))["groups"]; sys.exit(a != b)' \
        "$tmp/ref.json" "$tmp/$v.json" && ok || bad "$v input differs from the plain file"
done
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["inputs"][0]["codec"] != "zstd")' "$tmp/zst.json" \
    && ok || bad "zstd not detected by magic"

# CSV: one row per group, LSST-style quantile columns
"$TL" summary --format csv "$LOG" >"$tmp/s.csv"
head -1 "$tmp/s.csv" | grep -q "wall_time_s_p095" && ok || bad "csv lacks wall_time_s_p095"
head -1 "$tmp/s.csv" | grep -q "^category,tasks,attempts,open,samples,failed,results,wall_hours," && ok || bad "csv header"
[ "$(wc -l <"$tmp/s.csv")" = 7 ] && ok || bad "csv rows: $(wc -l <"$tmp/s.csv")"
python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); assert {x["category"] for x in r} >= {"odd name","short","hog"}' "$tmp/s.csv" \
    && ok || bad "csv category with a space"

# grouping by two keys and custom quantiles
"$TL" summary --format json --by category,result --quantiles 0.5,0.999 "$LOG" >"$tmp/by.json"
python3 - "$tmp/by.json" <<'PY' && ok || bad "--by category,result / --quantiles"
import json, sys
d = json.load(open(sys.argv[1]))
keys = {(g["key"]["category"], g["key"]["result"]) for g in d["groups"]}
assert ("hog", "RESOURCE_EXHAUSTION") in keys and ("sleeper", "CANCELED") in keys, keys
assert list(d["groups"][0]["metrics"]["wall_time_s"]["quantiles"]) == ["0.5", "0.999"]
PY

# sketches on request: approx and alpha in JSON; bad values are usage errors
"$TL" summary --format json --approx "$LOG" >"$tmp/approx.json"
python3 - "$tmp/approx.json" "$tmp/ref.json" <<'PY' && ok || bad "--approx"
import json, sys
a, e = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for ga, ge in zip(a["groups"], e["groups"]):
    assert ga["tasks"] == ge["tasks"]
    for name, m in ga["metrics"].items():
        if m["count"]:
            assert m["approx"] is True and m["alpha"] == 0.005, (name, m)
            assert ge["metrics"][name]["approx"] is False and ge["metrics"][name]["alpha"] == 0
            assert m["min"] == ge["metrics"][name]["min"] and m["max"] == ge["metrics"][name]["max"]
PY
expect_exit 2 "bad --alpha" "$TL" summary --alpha 2 "$LOG"
expect_exit 2 "bad --exact-limit" "$TL" summary --exact-limit lots "$LOG"
"$TL" summary --format json --exact-limit 10 "$LOG" >"$tmp/lim.json"
python3 -c 'import json,sys; g={x["key"]["category"]:x for x in json.load(open(sys.argv[1]))["groups"]}; assert g["short"]["metrics"]["wall_time_s"]["approx"] and not g["hog"]["metrics"]["wall_time_s"]["approx"]' \
    "$tmp/lim.json" && ok || bad "--exact-limit 10: big groups approximate, small ones exact"

# the table fits a 100-column terminal
"$TL" summary "$LOG" >"$tmp/t.txt"
w=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$tmp/t.txt")
[ "$w" -le 100 ] && ok || bad "table is $w columns wide"
grep -q "category=hog" "$tmp/t.txt" && ok || bad "table lacks the hog group"

# a progress line on a terminal for inputs over 100 MB, none otherwise
for i in $(seq 800); do cat "$LOG"; done >"$tmp/big.log"
if command -v script >/dev/null; then
    script -qc "'$TL' summary '$tmp/big.log' >/dev/null" /dev/null | tr '\r' '\n' >"$tmp/tty.txt"
    grep -Eq "big.log: +[0-9]+%" "$tmp/tty.txt" && ok || bad "no progress line on a terminal"
else
    echo "SKIP: script(1) not installed; progress line on a terminal not checked"
fi
"$TL" summary "$tmp/big.log" >/dev/null 2>"$tmp/notty.txt"
grep -q "%" "$tmp/notty.txt" && bad "progress printed while stderr is not a terminal" || ok
rm -f "$tmp/big.log"

# libcurl and librdkafka (about 30 shared objects with their TLS, SASL and
# Kerberos dependencies) are opened only when a server is used
# (core/dynlib.h): the loader's own trace shows what a command mapped.
LD_DEBUG=files "$TL" summary -q "$LOG" >/dev/null 2>"$tmp/ld"
grep -q "file=libzstd" "$tmp/ld" && ok || bad "LD_DEBUG=files listed no libraries: the next check would prove nothing"
grep -qE "file=lib(curl|rdkafka)" "$tmp/ld" && bad "summary loaded libcurl or librdkafka" || ok
printf 'sources:\n  - type: file\n    path: %s\n    parser: wq\nsinks:\n  - type: influxdb\n    url: http://127.0.0.1:9\n    db: x\n    spool_dir: %s/spool\ncheckpoint_dir: %s\n' \
    "$LOG" "$tmp" "$tmp" >"$tmp/check.yaml"
LD_DEBUG=files timeout 60 "$TL" check -c "$tmp/check.yaml" >"$tmp/out" 2>"$tmp/ld"
grep -q "file=libcurl.so" "$tmp/ld" && ok || bad "check with an InfluxDB sink did not open libcurl"
grep -q "not reachable" "$tmp/out" && ok || bad "check with InfluxDB on a closed port: no 'not reachable'"

# lines: `-o -` is stdout (the same task points as without -o; cumulative
# points carry the time of the run), no file named "-"
(cd "$tmp" && "$TL" lines -q "$LOG" | grep '^task,' >lp.default && "$TL" lines -q -o - "$LOG" | grep '^task,' >lp.dash) &&
    [ "$(wc -l <"$tmp/lp.dash")" -gt 200 ] && cmp -s "$tmp/lp.default" "$tmp/lp.dash" && ok || bad "lines -o - did not write stdout"
[ -e "$tmp/-" ] && bad "lines -o - created a file named -" || ok

echo "cli_summary: $pass passed, $fail failed"
[ "$fail" = 0 ]

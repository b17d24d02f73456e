#!/usr/bin/env bash
# deploy/: the compose file is valid (`docker compose config` or
# `docker-compose config`, when a client exists: no engine needed), the
# systemd unit passes `systemd-analyze verify` (when systemd-analyze exists),
# and every example configuration is valid for `tasklens run`.
#   deploy_files.sh TASKLENS REPO_DIR
set -u
tl=$1 repo=$2
fail=0 pass=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cp "$repo/deploy/.env.example" "$tmp/.env"
compose=()
if docker compose version >/dev/null 2>&1; then compose=(docker compose)
elif command -v docker-compose >/dev/null 2>&1; then compose=(docker-compose)
fi
if [ ${#compose[@]} -gt 0 ]; then
  if out=$("${compose[@]}" -f "$repo/deploy/docker-compose.yml" --env-file "$tmp/.env" config 2>&1); then
    for svc in kafka influxdb victoriametrics grafana tasklens; do
      if grep -q "^  $svc:" <<<"$out"; then ok "compose: service $svc"; else bad "compose: no service $svc"; fi
    done
  else
    bad "compose config: $out"
  fi
else
  echo "SKIP compose check: neither 'docker compose' nor docker-compose is installed"
fi

if command -v systemd-analyze >/dev/null 2>&1; then
  # verify needs the binaries the unit names: point them at this build
  sed -e "s|/usr/local/bin/tasklens|$(readlink -f "$tl")|g" "$repo/deploy/systemd/tasklens.service" \
    >"$tmp/tasklens.service"
  if out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$tmp/tasklens.service" 2>&1) &&
     ! grep -qi "tasklens.service" <<<"$out"; then
    ok "systemd-analyze verify tasklens.service"
  else
    bad "systemd-analyze verify: $out"
  fi
else
  echo "SKIP systemd unit check: systemd-analyze is not installed"
fi

for f in "$repo"/deploy/examples/*.yaml "$repo"/deploy/tasklens.yaml; do
  # `check` also probes servers; validity alone is what this test asks
  if out=$(KAFKA_BROKERS=127.0.0.1:1 "$tl" check -c "$f" 2>&1) && true; then :; fi
  if grep -q "valid (" <<<"$out"; then ok "$(basename "$f"): valid"; else bad "$(basename "$f"): $out"; fi
done
if grep -q 'kcat -P' "$repo/deploy/examples/kafka-consumer.yaml"; then ok "shipping recipe present"; else bad "no kcat recipe"; fi

# The unit's pre-start must pass while InfluxDB is down (run spools), and
# fail on a wrong configuration; plain `check` tells the two apart by status.
pre=$(sed -n 's/^ExecStartPre=[^ ]*tasklens //p' "$repo/deploy/systemd/tasklens.service")
printf 'sources:\n  - type: file\n    path: %s/x.log\nsinks:\n  - type: influxdb\n    url: http://127.0.0.1:1\n    db: d\n    spool_dir: %s/sp\n' \
  "$tmp" "$tmp" >"$tmp/down.yaml"
printf 'sources:\n  - type: file\n    path: %s/x.log\nsinkz: []\n' "$tmp" >"$tmp/wrong.yaml"
set -- ${pre/\/etc\/tasklens\/tasklens.yaml/$tmp/down.yaml}
"$tl" "$@" >/dev/null 2>&1; a=$?
set -- ${pre/\/etc\/tasklens\/tasklens.yaml/$tmp/wrong.yaml}
"$tl" "$@" >/dev/null 2>&1; b=$?
"$tl" check -c "$tmp/down.yaml" >/dev/null 2>&1; c=$?
if [ "$a" = 0 ] && [ "$b" = 2 ] && [ "$c" = 1 ]; then
  ok "unit pre-start ($pre): 0 with InfluxDB down, 2 on a wrong configuration; plain check: 1 when down"
else
  bad "unit pre-start ($pre): InfluxDB down -> $a (want 0), wrong config -> $b (want 2), plain check down -> $c (want 1)"
fi
echo "$pass checks passed, $fail failed"
[ "$fail" -eq 0 ]

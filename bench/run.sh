#!/usr/bin/env bash
# tasklens beside its peers, same inputs, same run; writes bench/RESULTS.md.
#   bench/run.sh [--runs N] [--copies N] [--lsst-files N] [--only wq,append,chrome,lsst,influx,rss]
# Builds build-bench/ (RelWithDebInfo, -DTL_BENCH=ON), installs the peers
# when missing (Debian python3-pandas; Telegraf with `go install` from the Go
# module proxy into ~/.cache/tasklens/go/bin, outside the repo), builds the
# inputs in bench/out/ (>= 600 MB WQ log, Chrome traces, 100k-file LSST
# tree; several GB, never in git) and runs bench/run.py. Takes about 30-40
# minutes with the defaults. Never run by CI.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
bash "$repo/scripts/install-deps.sh"
/usr/bin/python3 -c 'import pandas' 2>/dev/null || $SUDO apt-get install -y -qq python3-pandas >/dev/null
# simdjson for bench/simdjson_floor (the floor beside the append loop)
dpkg-query -W -f='${Status}' libsimdjson-dev 2>/dev/null | grep -q "install ok installed" ||
  $SUDO apt-get install -y -qq --no-install-recommends libsimdjson-dev >/dev/null
TELEGRAF_VERSION=${TELEGRAF_VERSION:-v1.37.2}
export TELEGRAF=${TELEGRAF:-$HOME/.cache/tasklens/go/bin/telegraf}
if [ ! -x "$TELEGRAF" ] && command -v go >/dev/null; then
  # only the plugins the benchmark uses; the Go proxy is reachable here, the
  # checksum database is not (GOSUMDB=off)
  GOBIN=$(dirname "$TELEGRAF") GOSUMDB=off GOFLAGS=-mod=mod go install \
    -tags "custom,inputs.tail,parsers.grok,aggregators.quantile,outputs.file,outputs.influxdb" \
    "github.com/influxdata/telegraf/cmd/telegraf@$TELEGRAF_VERSION" || echo "telegraf did not install" >&2
fi
export TELEGRAF_VERSION
cmake -S "$repo" -B "$repo/build-bench" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTL_BENCH=ON >/dev/null
ninja -C "$repo/build-bench" >/dev/null
exec /usr/bin/python3 "$here/run.py" "$repo/build-bench" "$@"

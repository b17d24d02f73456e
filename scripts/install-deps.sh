#!/usr/bin/env bash
# Installs everything tasklens needs to build and test, from Debian packages.
# Safe to run again; uses sudo when not root.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
PKGS=(
  # build
  cmake ninja-build gcc clang pkg-config
  libpcre2-dev libjansson-dev librdkafka-dev libcurl4-openssl-dev libzstd-dev libyaml-dev
  zlib1g-dev libmsgpack-dev libsqlite3-dev libsnappy-dev
  # tests: a real Work Queue manager and workers, numpy as the independent
  # quantile implementation, the gzip/zstd command-line tools
  coop-computing-tools coop-computing-tools-dev python3 python3-numpy python3-msgpack gzip zstd
  # Debian's makeflow is built with MPI: it needs Open MPI's runtime to start
  openmpi-bin
  # a real InfluxDB 1.x for the sink tests (started by the tests on 127.0.0.1)
  influxdb
  # the Prometheus-compatible stores for the histogram series and the PromQL
  # dashboards (started by the tests on 127.0.0.1)
  victoria-metrics prometheus
  # real Chrome trace producers for the trace parser tests (node; cmake is above)
  nodejs
  # a real Apache Kafka broker for the Kafka source tests: Java, Maven (fetches
  # the broker jars from Maven Central once), kcat as the producer
  default-jre-headless maven kcat
  # deploy/ checks: the compose file (`docker-compose config`, no engine),
  # the systemd unit (systemd-analyze), the dashboards' provisioning YAML
  docker-compose systemd python3-yaml
  # `tasklens report` is tested as a person sees it: a real headless Chromium
  # driven over its DevTools protocol (python3-websocket)
  chromium python3-websocket
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The servers come as packages whose units start on every interface; the
  # tests start their own on loopback, so the ones installed here stay off.
  for svc in influxdb victoria-metrics prometheus; do
    if printf '%s\n' "${missing[@]}" | grep -qx "$svc" && command -v systemctl >/dev/null; then
      $SUDO systemctl disable --now "$svc" >/dev/null 2>&1 || true
    fi
  done
fi
# The sanitizer and libFuzzer runtimes of the installed clang: Debian ships them
# in libclang-rt-N-dev, only a Recommends of clang (skipped above), so without
# this line the ASan build links on machines that happen to have it and fails
# on a fresh one ("cannot find ... libclang_rt.asan-x86_64.a").
v=$(clang -dumpversion | cut -d. -f1)
rt="libclang-rt-$v-dev"
if ! dpkg-query -W -f='${Status}' "$rt" 2>/dev/null | grep -q "install ok installed"; then
  if apt-cache show "$rt" >/dev/null 2>&1 || { $SUDO apt-get update -qq && apt-cache show "$rt" >/dev/null 2>&1; }; then
    echo "install-deps: installing $rt"
    $SUDO apt-get install -y -qq --no-install-recommends "$rt" >/dev/null
  fi
fi

#!/usr/bin/env bash
# Installs what tasklens needs, from Debian packages. Safe to run again; uses
# sudo when not root.
#   install-deps.sh core      the minimal build: compiler, cmake and the core's
#                             five libraries (scripts/quickstart.sh)
#   install-deps.sh build     every optional part too (Kafka, HTTP sinks, DASF, Parsl)
#   install-deps.sh           all that and the test stack (scripts/test.sh)
#   install-deps.sh --list core|build   print the packages, install nothing
set -euo pipefail
# The minimal build (README "Build options"; scripts/make-debian-roots.sh
# builds in a root holding exactly these)
CORE=(gcc libc6-dev make cmake pkg-config libpcre2-dev libjansson-dev libyaml-dev libzstd-dev zlib1g-dev)
# the optional parts' headers, one line per cmake option
OPTIONAL=(
  librdkafka-dev                       # TL_KAFKA
  libcurl4-openssl-dev libsnappy-dev   # TL_HTTP_SINKS
  libmsgpack-dev                       # TL_DASF
  libsqlite3-dev                       # TL_PARSL
)
if [ "${1:-}" = --list ]; then
  case ${2:-} in
    core) echo "${CORE[*]}" ;;
    build) echo "${CORE[*]} ${OPTIONAL[*]}" ;;
    *) echo "install-deps.sh --list core|build" >&2; exit 2 ;;
  esac
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
PKGS=("${CORE[@]}")
case ${1:-all} in
  core) ;;
  build) PKGS+=("${OPTIONAL[@]}") ;;
  all) PKGS+=("${OPTIONAL[@]}" ninja-build clang
  # tests: a real Work Queue manager and workers, numpy as the independent
  # quantile implementation, the gzip/zstd command-line tools
  coop-computing-tools coop-computing-tools-dev python3 python3-numpy python3-msgpack gzip zstd
  # the real producers (Parsl, Snakemake, codecarbon, line_profiler, pandas)
  # in venvs from PyPI, and older codecarbon wheels fetched with pip
  python3-venv python3-pip python3-requests
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
  # `tasklens top` is tested as an operator uses it: in a terminal (tmux)
  tmux
  # the package tests: CPack's .deb (dpkg-shlibdeps, file), lintian, and the
  # fresh Debian roots it is installed and built in (debootstrap)
  dpkg-dev file lintian debootstrap
) ;;
  *) echo "install-deps.sh [core|build|all] | --list core|build" >&2; exit 2 ;;
esac
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
[ "${1:-all}" = all ] || exit 0
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

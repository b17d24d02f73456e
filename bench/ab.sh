#!/bin/bash
# Interleaved A/B timing of parse_bench-style commands on a noisy machine:
#   bench/ab.sh N "label:command" "label:command" ...
# Runs every command in turn, N times over, and prints each one's best
# "best of R: X s" figure. The commands must print parse_bench's line.
set -euo pipefail
n=$1
shift
declare -A best
for _ in $(seq "$n"); do
  for spec in "$@"; do
    lab=${spec%%:*}
    t=$(${spec#*:} | sed -n 's/.*best of [0-9]*: \([0-9.]*\) s.*/\1/p')
    if [ -z "${best[$lab]:-}" ] || awk -v a="$t" -v b="${best[$lab]}" 'BEGIN{exit !(a < b)}'; then
      best[$lab]=$t
    fi
  done
done
for spec in "$@"; do
  lab=${spec%%:*}
  echo "$lab ${best[$lab]}"
done

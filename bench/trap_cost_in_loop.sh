#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a trap costs inside a loop, against what the start-up calibration says it costs: the loop's
# own thread CPU time (user + system, which the loop prints) untraced and with every call trapped
# (--cuda-detail exact), interleaved, for loops whose calls are K ops apart. In-loop cost per
# trapped call = (exact − untraced) ÷ the calls; the calibrated cost is the run's probe_call_ns.
# A per-trap excess over the calibration makes a duty-cycled estimate lean low by about
# excess ÷ (the loop's untrapped time per call), which shrinks as K grows.
# Usage: bench/trap_cost_in_loop.sh OUT BIN ROUNDS K... -- LOOP [N]
#   e.g. bench/trap_cost_in_loop.sh out build/ingero-bench 3 5 20 80 -- build/bench/ingero_launch_loop_host 60000
# Rows go to OUT/trap-cost.jsonl.
set -euo pipefail
usage="usage: bench/trap_cost_in_loop.sh OUT BIN ROUNDS K... -- LOOP [N]"
out=${1:?$usage} bin=${2:?$usage} rounds=${3:?$usage}
shift 3
ks=()
while (($# > 0)) && [[ $1 != -- ]]; do ks+=("$1"); shift; done
[[ ${1:-} == -- && ${#ks[@]} -gt 0 ]] || { echo "$usage" >&2; exit 2; }
shift
(($# > 0)) || { echo "$usage" >&2; exit 2; }
python=${INGERO_PYTHON:-python3}
mkdir -p "$out"
: >"$out/trap-cost.jsonl"
for ((round = 1; round <= rounds; round++)); do
  for k in "${ks[@]}"; do
    order=(untraced exact)
    ((round % 2 == 0)) && order=(exact untraced)
    for s in "${order[@]}"; do
      rm -f "$out/trap-cost.db"
      if [[ $s == untraced ]]; then
        loop=$("$@" "$k" | grep '^{' | tail -1)
        call_ns=null
      else
        loop=$("$bin" trace --db "$out/trap-cost.db" --cuda-detail exact -- "$@" "$k" 2>>"$out/trap-cost.log" | grep '^{' | tail -1)
        call_ns=$("$bin" explain --db "$out/trap-cost.db" --run 1 --json 2>>"$out/trap-cost.log" |
          "$python" -c 'import json, sys; print(json.load(sys.stdin)["tracing_cost"]["probe_call_ns"])')
      fi
      echo "{\"round\": $round, \"k\": $k, \"setting\": \"$s\", \"probe_call_ns\": $call_ns, \"loop\": $loop}" |
        tee -a "$out/trap-cost.jsonl"
    done
  done
done
rm -f "$out/trap-cost.db"

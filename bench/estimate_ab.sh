#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# How close a duty-cycled count comes to the truth, for two builds of the tracer side by side
# on one launch loop, interleaved (the order reversed every other round): each traced run's
# estimate of the loop's hot function (the estimated call row with the most calls), its interval
# and duty share, against the calls the loop says it made (its "calls" field, else TRUTH).
# Usage: bench/estimate_ab.sh OUT A_BIN B_BIN ROUNDS -- LOOP [ARGS...]
#   e.g. bench/estimate_ab.sh out build/ingero-bench old/ingero-bench 8 -- build/bench/ingero_launch_loop_host 60000 20
#   (B_BIN may be '-' for one build.) Rows go to OUT/estimate-ab.jsonl.
# BUSY=N keeps N busy processes running throughout (a job's loader workers on every core), so that
# the loop and the tracer's threads wait for CPUs as they would on a busy machine.
# WINDOW_TRUTH=1 has the loop keep each call's time (LAUNCH_TIMES, bench/call_times.h) and adds
# bench/window_truth.py's check of the estimate, window by window, as the row's "window_truth".
set -euo pipefail
usage="usage: bench/estimate_ab.sh OUT A_BIN B_BIN ROUNDS -- LOOP [ARGS...]"
out=${1:?$usage} a=${2:?$usage} b=${3:?$usage} rounds=${4:?$usage}
shift 4
[[ ${1:-} == -- ]] || { echo "$usage" >&2; exit 2; }
shift
(($# > 0)) || { echo "$usage" >&2; exit 2; }
python=${INGERO_PYTHON:-python3}
mkdir -p "$out"
sides=(a)
[[ $b != - ]] && sides=(a b)
row='
import json, sys
loop = json.loads(sys.argv[1]) if sys.argv[1] else {}
d = json.load(sys.stdin)
rows = [r for r in d["call_latency"] if r.get("estimated")]
r = max(rows, key=lambda r: r["calls"]) if rows else None
truth = loop.get("calls") or (int(sys.argv[2]) if sys.argv[2] else None)
out = {"truth": truth, "loop_seconds": loop.get("seconds"), "probe_call_ns": d["tracing_cost"]["probe_call_ns"]}
if r:
    out.update(function=r["function"], estimate=r["calls"], low=r["calls_low"], high=r["calls_high"],
               probed=r["probed_calls"], duty_share=r["duty_share"])
    if truth:
        out.update(error=r["calls"] / truth - 1, covered=r["calls_low"] <= truth and (r["calls_high"] is None or truth <= r["calls_high"]))
print(json.dumps(out)[1:-1])'
keep_times=()  # the loop's own call times, as a word list that survives spaces in OUT
[[ -n ${WINDOW_TRUTH:-} ]] && keep_times=(env LAUNCH_TIMES="$out/times.bin")
busy=()
trap 'kill "${busy[@]}" 2>/dev/null || true' EXIT
for ((i = 0; i < ${BUSY:-0}; i++)); do
  "$python" -c 'while True: pass' &
  busy+=($!)
done
for ((round = 1; round <= rounds; round++)); do
  order=("${sides[@]}")
  ((round % 2 == 0)) && order=($(printf '%s\n' "${sides[@]}" | tac))
  for side in "${order[@]}"; do
    bin=$a; [[ $side == b ]] && bin=$b
    rm -f "$out/estimate.db" "$out/times.bin"
    loop=$("$bin" trace --db "$out/estimate.db" -- "${keep_times[@]}" "$@" \
      2>>"$out/estimate.log" | grep '^{' | tail -1 || true)
    fields=$("$a" explain --db "$out/estimate.db" --run 1 --json 2>>"$out/estimate.log" | "$python" -c "$row" "$loop" "${TRUTH:-}")
    if [[ -n ${WINDOW_TRUTH:-} ]]; then
      truth=$("$python" "$(dirname "$0")/window_truth.py" "$out/estimate.db" "$out/times.bin" ${TRUTH:+--truth "$TRUTH"} \
        2>>"$out/estimate.log" || echo null)
      fields="$fields, \"window_truth\": $truth"
    fi
    echo "{\"round\": $round, \"side\": \"$side\", \"busy\": ${BUSY:-0}, $fields}" | tee -a "$out/estimate-ab.jsonl"
  done
done
rm -f "$out/estimate.db" "$out/times.bin"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Two builds of the tracer side by side on the #154318 loader (full size, 4 workers) and on a
# page-touching loop, interleaved with untraced runs (the order reversed every other round):
# the epochs, and what each traced run's kernel programs ran for by the kernel's statistics.
# Usage: bench/tracer_ab.sh OUT A_BIN B_BIN [ROUNDS]   (A_BIN, B_BIN: two ingero-bench builds)
set -euo pipefail
out=${1:?usage: bench/tracer_ab.sh OUT A_BIN B_BIN [ROUNDS]}
a=${2:?} b=${3:?} rounds=${4:-3}
python=${INGERO_PYTHON:-python3}
mkdir -p "$out"
summary='
import json, sys
d = json.load(sys.stdin)
k = d["tracing_cost"].get("kernel_programs") or {}
print(json.dumps({"epoch_median_s": d["metrics"]["epoch_median_s"], "epoch_seconds": d["metrics"]["epoch_seconds"],
                  "programs_ns": k.get("ns"), "programs_runs": k.get("runs"), "traced_cpu_ns": k.get("traced_cpu_ns"),
                  "programs": (k.get("programs") or [])[:4]})[1:-1])'
for ((round = 1; round <= rounds; round++)); do
  order=(untraced a b)
  ((round % 2 == 0)) && order=(b a untraced)
  for side in "${order[@]}"; do
    bin=$a; [[ $side == b ]] && bin=$b
    how=(); [[ $side == untraced ]] && how=(--no-trace)
    rm -f "$out/ab.db"
    "$bin" --workload dataloader --mode loader --num-workers 4 --epochs 2 --db "$out/ab.db" "${how[@]}" >>"$out/ab.log" 2>&1
    fields=$("$a" explain --db "$out/ab.db" --run 1 --json 2>>"$out/ab.log" | "$python" -c "$summary")
    echo "{\"round\": $round, \"job\": \"loader\", \"side\": \"$side\", $fields}" | tee -a "$out/tracer-ab.jsonl"
    rm -f "$out/ab.db"
    if [[ $side == untraced ]]; then
      t=$("$python" bench/page_touch.py | sed 's/LOOP //')
    else
      t=$("$bin" trace --db "$out/ab.db" -- "$python" bench/page_touch.py 2>>"$out/ab.log" | sed 's/LOOP //')
      fields=$("$a" explain --db "$out/ab.db" --run 1 --json 2>>"$out/ab.log" | "$python" -c "
import json, sys
k = json.load(sys.stdin)['tracing_cost'].get('kernel_programs') or {}
print(json.dumps({'programs_ns': k.get('ns'), 'programs_runs': k.get('runs'), 'programs': (k.get('programs') or [])[:2]})[1:-1])")
    fi
    echo "{\"round\": $round, \"job\": \"page_touch\", \"side\": \"$side\", \"seconds\": $t${fields:+, $fields}}" | tee -a "$out/tracer-ab.jsonl"
    fields=
    rm -f "$out/ab.db"
  done
done

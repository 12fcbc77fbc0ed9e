#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a probed call's trap costs in two builds of the tracer, side by side, interleaved (the order
# reversed every other round): a loop of cudaEventRecord calls with no work between them, every call
# trapped (--cuda-detail exact), each run's calibrated cost of a hit with its return, and the job's
# system time per call (where the traps are charged). For a change to the call programs themselves.
# Usage: bench/call_pairing_ab.sh OUT A_BIN B_BIN CUDA_CALLS [ROUNDS] [CALLS]
#   A_BIN, B_BIN: two ingero-bench builds; CUDA_CALLS: build/tests/tracer/ingero_cuda_calls
set -euo pipefail
usage="usage: bench/call_pairing_ab.sh OUT A_BIN B_BIN CUDA_CALLS [ROUNDS] [CALLS]"
out=${1:?$usage} a=${2:?$usage} b=${3:?$usage} loop=${4:?$usage} rounds=${5:-6} calls=${6:-200000}
cudart=${INGERO_CUDART:-/usr/local/cuda/lib64/libcudart.so.13}
mkdir -p "$out"
for ((round = 1; round <= rounds; round++)); do
  order=(a b)
  ((round % 2 == 0)) && order=(b a)
  for side in "${order[@]}"; do
    bin=$a; [[ $side == b ]] && bin=$b
    rm -f "$out/ab.db"
    start=$(date +%s%N)
    "$bin" trace --db "$out/ab.db" --cuda-detail exact --cudart "$cudart" -- "$loop" --records "$calls" --every-us 0 \
      >>"$out/ab.log" 2>&1
    wall_ns=$(($(date +%s%N) - start))
    row=$(sqlite3 -separator ' ' "$out/ab.db" "SELECT
      (SELECT value FROM run_settings WHERE key = 'probe_call_ns'),
      (SELECT value FROM run_settings WHERE key = 'job_system_ns'),
      (SELECT value FROM run_settings WHERE key = 'job_user_ns'),
      (SELECT sum(calls) FROM call_stats WHERE op = (SELECT op FROM ops WHERE name = 'cudaEventRecord'))")
    read -r probe_call_ns system_ns user_ns counted <<<"$row"
    echo "{\"round\": $round, \"side\": \"$side\", \"probe_call_ns\": $probe_call_ns, \"job_system_ns_per_call\": $((system_ns / calls)), \"job_user_ns_per_call\": $((user_ns / calls)), \"counted\": $counted, \"wall_ns\": $wall_ns}" |
      tee -a "$out/call-pairing-ab.jsonl"
  done
done
rm -f "$out/ab.db"

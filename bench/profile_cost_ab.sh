#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the CPU profile costs a traced job: the same job traced with --profile-hz 0 and at the default
# rate (or PROFILE_HZ), interleaved (the order reversed every other round). Two jobs: the #154318 script
# at a reduced size (its DataLoader with 2 workers) and a Python training loop (tests/e2e/jobs/
# train_loop.py: a DataLoader feeding a loop that computes). Each row: the job's CPU time (user + system,
# from wait4, as the run stores it), its wall time, the samples taken and the run's own profile_cost_ns
# (the BPF program's time, from the kernel's run-time statistics).
# Usage: bench/profile_cost_ab.sh OUT BIN [ROUNDS]
set -euo pipefail
usage="usage: bench/profile_cost_ab.sh OUT BIN [ROUNDS]"
out=${1:?$usage} bin=${2:?$usage} rounds=${3:-6}
python=${INGERO_PYTHON:-/usr/bin/python3}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
declare -A jobs=(
  [loader]="$python $repo/bench/user_jobs/dataloader_vs_indexing.py --samples 400000 --features 32 --batch 4096 --workers 2 --epochs 2"
  [train]="$python $repo/tests/e2e/jobs/train_loop.py --workers 2 --seconds 8 --sample-ms 0.5 --step-ms 4"
)
for ((round = 1; round <= rounds; round++)); do
  order=(off on)
  ((round % 2 == 0)) && order=(on off)
  for job in loader train; do
    for side in "${order[@]}"; do
      hz=0; [[ $side == on ]] && hz=${PROFILE_HZ:-49}
      rm -f "$out/ab.db"
      start=$(date +%s%N)
      # shellcheck disable=SC2086
      "$bin" trace --db "$out/ab.db" --profile-hz "$hz" -- ${jobs[$job]} >>"$out/ab.log" 2>&1
      wall_ns=$(($(date +%s%N) - start))
      row=$(sqlite3 -separator ' ' "$out/ab.db" "SELECT
        (SELECT value FROM run_settings WHERE key = 'job_user_ns'),
        (SELECT value FROM run_settings WHERE key = 'job_system_ns'),
        (SELECT coalesce(sum(samples), 0) FROM profile_samples),
        (SELECT coalesce((SELECT value FROM run_settings WHERE key = 'profile_cost_ns'), 0))")
      read -r user_ns system_ns samples cost_ns <<<"$row"
      echo "{\"round\": $round, \"job\": \"$job\", \"side\": \"$side\", \"hz\": $hz, \"job_cpu_ns\": $((user_ns + system_ns)), \"wall_ns\": $wall_ns, \"samples\": $samples, \"profile_cost_ns\": ${cost_ns%.*}}" |
        tee -a "$out/profile-cost-ab.jsonl"
    done
  done
done
rm -f "$out/ab.db"

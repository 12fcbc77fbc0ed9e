#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the worker-health sampler (tracer/process_sampler.h) costs a traced DataLoader job: the same job
# traced with --health-interval-ms 0 (off) and at the default interval (or INTERVAL_MS), interleaved (the
# order reversed every other round). Two jobs: the #154318 script at a reduced size (its DataLoader with 2
# workers), and tests/e2e/jobs/health_job.py cow (2 workers holding hundreds of MB: the smaps_rollup walks'
# worst case). Each row: the job's CPU time (user + system, from wait4's rusage, as the run stores it), its
# wall time, the samples taken and the sampler thread's own CPU time (health_sampler_cpu_ns: reading
# /proc, the page-table walks of smaps_rollup included). The table: per job, the medians of each side,
# the sampler's own CPU as a share of the job's, and the job's CPU with it on against off.
# Usage: bench/health_sampler_cost.sh OUT BIN [ROUNDS] [INTERVAL_MS]
set -euo pipefail
usage="usage: bench/health_sampler_cost.sh OUT BIN [ROUNDS] [INTERVAL_MS]"
out=${1:?$usage} bin=${2:?$usage} rounds=${3:-6} interval=${4:-500}
python=${INGERO_PYTHON:-/usr/bin/python3}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
results=$out/health-sampler-cost.jsonl
: >"$results"
declare -A jobs=(
  [loader]="$python $repo/bench/user_jobs/dataloader_vs_indexing.py --samples 400000 --features 32 --batch 4096 --workers 2 --epochs 2"
  [cow]="$python $repo/tests/e2e/jobs/health_job.py cow"
)
for ((round = 1; round <= rounds; round++)); do
  order=(off on)
  ((round % 2 == 0)) && order=(on off)
  for job in loader cow; do
    for side in "${order[@]}"; do
      ms=0; [[ $side == on ]] && ms=$interval
      rm -f "$out/ab.db"
      start=$(date +%s%N)
      # shellcheck disable=SC2086
      "$bin" trace --db "$out/ab.db" --health-interval-ms "$ms" -- ${jobs[$job]} >>"$out/ab.log" 2>&1 || true
      wall_ns=$(($(date +%s%N) - start))
      row=$(sqlite3 -separator ' ' "$out/ab.db" "SELECT
        (SELECT value FROM run_settings WHERE key = 'job_user_ns'),
        (SELECT value FROM run_settings WHERE key = 'job_system_ns'),
        (SELECT count(*) FROM process_samples),
        (SELECT coalesce((SELECT value FROM run_settings WHERE key = 'health_sampler_cpu_ns'), 0))")
      read -r user_ns system_ns samples sampler_ns <<<"$row"
      echo "{\"round\": $round, \"job\": \"$job\", \"side\": \"$side\", \"interval_ms\": $ms, \"job_cpu_ns\": $((user_ns + system_ns)), \"wall_ns\": $wall_ns, \"samples\": $samples, \"sampler_cpu_ns\": $sampler_ns}" |
        tee -a "$results"
    done
  done
done
rm -f "$out/ab.db"
"$python" - "$results" "$bin" <<'PY'
import json, os, platform, statistics, subprocess, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
mem = next((int(l.split()[1]) // 1024 // 1024 for l in open("/proc/meminfo") if l.startswith("MemTotal")), 0)
commit = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(sys.argv[2])), "rev-parse", "--short", "HEAD"],
                        capture_output=True, text=True).stdout.strip() or "?"
print(f"machine: {cpu}, {os.cpu_count()} CPUs, {mem} GiB, Linux {platform.release()}; commit {commit}; "
      f"{max(r['round'] for r in rows)} rounds, interleaved")
print(f"{'job':8} {'rounds':>6} {'job CPU off':>12} {'job CPU on':>11} {'on-off':>8} {'sampler CPU':>12} "
      f"{'of job CPU':>10} {'samples':>8}")
for job in sorted({r["job"] for r in rows}):
    med = lambda side, key: statistics.median(r[key] for r in rows if r["job"] == job and r["side"] == side)
    off, on = med("off", "job_cpu_ns"), med("on", "job_cpu_ns")
    shares = [r["sampler_cpu_ns"] / r["job_cpu_ns"] for r in rows if r["job"] == job and r["side"] == "on" and r["job_cpu_ns"]]
    print(f"{job:8} {sum(r['job'] == job and r['side'] == 'on' for r in rows):>6} {off / 1e9:>11.2f}s {on / 1e9:>10.2f}s "
          f"{100 * (on - off) / off:>+7.2f}% {med('on', 'sampler_cpu_ns') / 1e6:>10.2f}ms "
          f"{100 * statistics.median(shares):>9.3f}% {med('on', 'samples'):>8.0f}")
PY

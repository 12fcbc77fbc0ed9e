#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the worker-health sampler (tracer/process_sampler.h) costs: a torch DataLoader job with 2 workers
# (tests/e2e/jobs/health_job.py healthy, and cow for a job whose workers hold hundreds of MB) traced at
# the default interval, and the sampler thread's CPU time (run setting health_sampler_cpu_ns: reading
# smaps_rollup, counting /proc/PID/fd, limits, statvfs of /dev/shm, wchan; the kernel's page-table walk
# for Pss is charged to it) against the job's own CPU time (job_user_ns + job_system_ns).
#   sudo bench/health_sampler_cost.sh [build/ingero-bench] [interval_ms]
set -euo pipefail
bin=${1:-build/ingero-bench}
interval=${2:-500}
job=$(dirname "$0")/../tests/e2e/jobs/health_job.py
db=$(mktemp -d)/health-cost.db
trap 'rm -rf "$(dirname "$db")"' EXIT
for case in healthy cow; do
  "$bin" trace --db "$db" --health-interval-ms "$interval" -- /usr/bin/python3 "$job" "$case" >/dev/null 2>&1 || true
  sqlite3 -separator ' ' "$db" "
    SELECT '$case', r.run_id,
      (SELECT count(*) FROM process_samples p WHERE p.run_id = r.run_id) AS samples,
      (SELECT value FROM run_settings s WHERE s.run_id = r.run_id AND key = 'health_sampler_cpu_ns') AS sampler_ns,
      (SELECT value FROM run_settings s WHERE s.run_id = r.run_id AND key = 'job_user_ns')
        + (SELECT value FROM run_settings s WHERE s.run_id = r.run_id AND key = 'job_system_ns') AS job_ns
    FROM runs r ORDER BY run_id DESC LIMIT 1" |
    while read -r name run samples sampler_ns job_ns; do
      awk -v n="$name" -v s="$samples" -v c="$sampler_ns" -v j="$job_ns" -v i="$interval" 'BEGIN {
        printf "%-8s interval %s ms: %d samples, sampler %.2f ms CPU (%.1f us/sample), job %.2f s CPU: %.3f %% of it\n",
               n, i, s, c / 1e6, (s ? c / s / 1e3 : 0), j / 1e9, (j ? 100 * c / j : 0) }'
    done
done

# SPDX-License-Identifier: Apache-2.0
"""A duty-cycled estimate checked window by window against the job's own record of its calls.

    python3 bench/window_truth.py TRACE.db TIMES [--run N] [--function NAME] [--truth CALLS]

TIMES is what a launch loop wrote with LAUNCH_TIMES=FILE (bench/call_times.h): the CLOCK_MONOTONIC
time before each call, the trace's clock. The trace's call_sampling_windows say when the probes were
in. Only windows and detached gaps wholly inside the loop (its first to its last call) are compared,
so the rates are the loop's own. Prints one JSON object:
- true_rate_windows / true_rate_gaps: the loop's calls per wall second while the probes were in and
  while they were out; in_job_trap_ns: what a probed call cost the loop (the difference of the
  reciprocals), against the calibration's probe_call_ns;
- estimator_rate: the windows' rate as the estimate took it (their callers' calls over their on-CPU
  time less their traps: the calibrated cost x trap_cost_scale, the scale the tracer measured in the
  job, or 1 where it did not), and rate_error: it against the true rate in the gaps;
  calibrated_rate_error: the same with the calibrated cost alone;
- return_program_ns / probe_return_program_ns: the return probe's program per hit in the windows
  and in the calibration (their ratio is trap_cost_scale), and in_job_trap_ratio: in_job_trap_ns
  over probe_call_ns, which that ratio stands for;
- gap_oncpu_over_wall: the callers' on-CPU time the estimate gave the gaps over their wall time
  (1 for a loop that never leaves its CPU);
- counted_over_true: the windows' counted calls over the loop's calls between their start and end;
- estimate_error: the whole estimate against --truth (or the loop's calls, when not given).
For a loop pinned to a CPU that it never leaves, wall time is its on-CPU time, so a rate error is
the correction's (the trap's cost inside the job), and the rest of the estimate's error is the gaps'
time or the windows' counting.
"""
import argparse
import bisect
import json
import sqlite3
import sys
from array import array


def load_times(path):
    times = array("q")
    with open(path, "rb") as f:
        times.frombytes(f.read())
    return sorted(times)


def between(times, start, end):
    return bisect.bisect_left(times, end) - bisect.bisect_left(times, start)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db")
    ap.add_argument("times")
    ap.add_argument("--run", type=int)
    ap.add_argument("--function")
    ap.add_argument("--truth", type=int)
    a = ap.parse_args()
    db = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
    run = a.run or db.execute("SELECT max(run_id) FROM call_sampling").fetchone()[0]
    if run is None:
        sys.exit(f"{a.db}: no duty-cycled function in any run")
    # Files before schema 8 have no trap cost scale or program time: read as NULL.
    def column(table, name, prefix=""):
        known = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        return prefix + name if name in known else "NULL"

    query = ("SELECT s.pid, s.op, o.name, s.since_ns, s.until_ns, s.estimated_calls, s.estimated_low, "
             f"s.estimated_high, {column('call_sampling', 'trap_cost_scale', 's.')} FROM call_sampling s "
             "JOIN ops o ON o.op = s.op WHERE s.run_id = ?")
    rows = [r for r in db.execute(query, (run,)) if not a.function or r[2] == a.function]
    if not rows:
        sys.exit(f"{a.db}: run {run} sampled no {a.function or 'function'}")
    pid, op, name, since, until, estimate, low, high, trap_cost_scale = max(rows, key=lambda r: r[5])
    windows = db.execute(
        "SELECT start_ns, end_ns, calls, callers_gap_before_ns, callers_window_ns, callers_calls, "
        f"callers_trapped_ns, {column('call_sampling_windows', 'return_program_runs')}, "
        f"{column('call_sampling_windows', 'return_program_ns')} FROM call_sampling_windows "
        "WHERE run_id = ? AND pid = ? AND op = ? "
        "ORDER BY seq",
        (run, pid, op)).fetchall()
    settings = dict(db.execute("SELECT key, value FROM run_settings WHERE run_id = ?", (run,)))
    times = load_times(a.times)
    first, last = times[0], times[-1]

    def inside(start, end):
        return first <= start and end <= last

    win_len = win_true = win_counted = 0
    est_calls = est_time = est_trapped = 0.0
    program_runs = program_ns = 0
    gap_wall = gap_true = gap_oncpu = 0
    previous_end = since
    for start, end, calls, gap_before, callers_ns, callers_calls, trapped_ns, runs, ns in windows:
        program_runs += runs or 0
        program_ns += ns or 0
        if inside(previous_end, start) and gap_before is not None:
            gap_wall += start - previous_end
            gap_true += between(times, previous_end, start)
            gap_oncpu += gap_before
        if inside(start, end):
            win_len += end - start
            win_true += between(times, start, end)
            win_counted += calls
            if callers_ns:
                est_calls += callers_calls
                est_time += callers_ns
                est_trapped += trapped_ns
        previous_end = end
    if not win_len or not gap_wall:
        sys.exit(f"{a.db}: run {run} has no window or gap inside the loop's calls")
    rate_windows = win_true / (win_len * 1e-9)
    rate_gaps = gap_true / (gap_wall * 1e-9)
    scale = trap_cost_scale or 1.0

    def rate_error(trap_scale):
        untrapped = est_time - est_trapped * trap_scale
        return round(est_calls / (untrapped * 1e-9) / rate_gaps - 1, 4) if untrapped > 0 else None

    untrapped = est_time - est_trapped * scale
    estimator_rate = est_calls / (untrapped * 1e-9) if untrapped > 0 else None
    probe_call_ns = float(settings["probe_call_ns"]) if "probe_call_ns" in settings else None
    in_job_trap_ns = (1 / rate_windows - 1 / rate_gaps) * 1e9
    truth = a.truth if a.truth is not None else len(times)
    out = {
        "run": run, "function": name, "pid": pid, "windows": len(windows),
        "windows_inside": sum(1 for w in windows if inside(w[0], w[1])),
        "probe_call_ns": probe_call_ns,
        "true_rate_windows": round(rate_windows), "true_rate_gaps": round(rate_gaps),
        "in_job_trap_ns": round(in_job_trap_ns, 1),
        "in_job_trap_ratio": round(in_job_trap_ns / probe_call_ns, 3) if probe_call_ns else None,
        "trap_cost_scale": trap_cost_scale,
        "return_program_ns": round(program_ns / program_runs, 1) if program_runs else None,
        "probe_return_program_ns": float(settings["probe_return_program_ns"])
        if "probe_return_program_ns" in settings else None,
        "estimator_rate": round(estimator_rate) if estimator_rate else None,
        "rate_error": round(estimator_rate / rate_gaps - 1, 4) if estimator_rate else None,
        "calibrated_rate_error": rate_error(1.0),
        "gap_oncpu_over_wall": round(gap_oncpu / gap_wall, 4),
        "counted_over_true": round(win_counted / win_true, 4) if win_true else None,
        "estimate": estimate, "low": low, "high": high, "truth": truth,
        "estimate_error": round(estimate / truth - 1, 4),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()

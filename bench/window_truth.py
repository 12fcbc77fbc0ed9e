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
  time less the calibrated traps), and rate_error: it against the true rate in the gaps;
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
    query = ("SELECT s.pid, s.op, o.name, s.since_ns, s.until_ns, s.estimated_calls, s.estimated_low, "
             "s.estimated_high FROM call_sampling s JOIN ops o ON o.op = s.op WHERE s.run_id = ?")
    rows = [r for r in db.execute(query, (run,)) if not a.function or r[2] == a.function]
    if not rows:
        sys.exit(f"{a.db}: run {run} sampled no {a.function or 'function'}")
    pid, op, name, since, until, estimate, low, high = max(rows, key=lambda r: r[5])
    windows = db.execute(
        "SELECT start_ns, end_ns, calls, callers_gap_before_ns, callers_window_ns, callers_calls, "
        "callers_trapped_ns FROM call_sampling_windows WHERE run_id = ? AND pid = ? AND op = ? "
        "ORDER BY seq",
        (run, pid, op)).fetchall()
    settings = dict(db.execute("SELECT key, value FROM run_settings WHERE run_id = ?", (run,)))
    times = load_times(a.times)
    first, last = times[0], times[-1]

    def inside(start, end):
        return first <= start and end <= last

    win_len = win_true = win_counted = 0
    est_calls = est_time = 0.0
    gap_wall = gap_true = gap_oncpu = 0
    previous_end = since
    for start, end, calls, gap_before, callers_ns, callers_calls, trapped_ns in windows:
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
                est_time += callers_ns - trapped_ns
        previous_end = end
    if not win_len or not gap_wall:
        sys.exit(f"{a.db}: run {run} has no window or gap inside the loop's calls")
    rate_windows = win_true / (win_len * 1e-9)
    rate_gaps = gap_true / (gap_wall * 1e-9)
    estimator_rate = est_calls / (est_time * 1e-9) if est_time else None
    truth = a.truth if a.truth is not None else len(times)
    out = {
        "run": run, "function": name, "pid": pid, "windows": len(windows),
        "windows_inside": sum(1 for w in windows if inside(w[0], w[1])),
        "probe_call_ns": float(settings["probe_call_ns"]) if "probe_call_ns" in settings else None,
        "true_rate_windows": round(rate_windows), "true_rate_gaps": round(rate_gaps),
        "in_job_trap_ns": round((1 / rate_windows - 1 / rate_gaps) * 1e9, 1),
        "estimator_rate": round(estimator_rate) if estimator_rate else None,
        "rate_error": round(estimator_rate / rate_gaps - 1, 4) if estimator_rate else None,
        "gap_oncpu_over_wall": round(gap_oncpu / gap_wall, 4),
        "counted_over_true": round(win_counted / win_true, 4) if win_true else None,
        "estimate": estimate, "low": low, "high": high, "truth": truth,
        "estimate_error": round(estimate / truth - 1, 4),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()

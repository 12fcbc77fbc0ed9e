# SPDX-License-Identifier: Apache-2.0
"""Checks a trace for slow calls of duty-cycled functions that are artefacts of a window's edge.

    python3 bench/slow_calls_at_edges.py TRACE.db [--run N]

For each run and each sampled function (call_sampling), every stored call of that function in that
process (events) is a slow call the tracer kept (hot calls are stored from call_stream_min_ns). A call
is at an edge when its interval holds the start of sampling or a window's start or end
(call_sampling_windows): a phantom would be one. Prints one JSON object per run: the slow calls, how many
hold an edge, their time, the windows and the calls cut at edges (call_stats.cut_calls).
"""
import argparse
import bisect
import json
import sqlite3


def edges_of(db, run, pid, op):
    rows = db.execute("SELECT start_ns, end_ns FROM call_sampling_windows WHERE run_id=? AND pid=? AND op=? "
                      "ORDER BY seq", (run, pid, op)).fetchall()
    since = db.execute("SELECT since_ns FROM call_sampling WHERE run_id=? AND pid=? AND op=?",
                       (run, pid, op)).fetchone()
    edges = sorted([e for r in rows for e in r] + ([since[0]] if since and since[0] else []))
    return edges, len(rows)


def check_run(db, run):
    out = {"run": run, "functions": []}
    floor = db.execute("SELECT value FROM run_settings WHERE run_id=? AND key='call_stream_min_ns'", (run,)).fetchone()
    floor = int(floor[0]) if floor else 0
    for pid, op, name in db.execute(
            "SELECT s.pid, s.op, o.name FROM call_sampling s JOIN ops o USING(op) WHERE s.run_id=?", (run,)).fetchall():
        edges, windows = edges_of(db, run, pid, op)
        pids = [pid] if pid else [r[0] for r in db.execute(
            "SELECT DISTINCT pid FROM events WHERE run_id=? AND op=?", (run, op))]
        calls = db.execute("SELECT ts_ns, dur_ns FROM events WHERE run_id=? AND op=? AND dur_ns>=? AND pid IN (%s)" %
                           ",".join("?" * len(pids)), (run, op, floor, *pids)).fetchall() if pids else []
        at_edge = [c for c in calls if bisect.bisect_left(edges, c[0]) < len(edges)
                   and edges[bisect.bisect_left(edges, c[0])] <= c[0] + (c[1] or 0)]
        cut = db.execute("SELECT sum(cut_calls) FROM call_stats WHERE run_id=? AND op=? AND (?=0 OR pid=?)",
                         (run, op, pid, pid)).fetchone()[0]
        out["functions"].append({
            "pid": pid, "function": name, "windows": windows, "slow_calls": len(calls),
            "slow_ms": round(sum(c[1] or 0 for c in calls) / 1e6, 3),
            "longest_ms": round(max((c[1] or 0 for c in calls), default=0) / 1e6, 3),
            "at_edge": len(at_edge), "cut_calls": cut})
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("db")
    p.add_argument("--run", type=int)
    a = p.parse_args()
    db = sqlite3.connect("file:%s?mode=ro" % a.db, uri=True)
    runs = [a.run] if a.run else [r[0] for r in db.execute("SELECT run_id FROM runs ORDER BY run_id")]
    for run in runs:
        print(json.dumps(check_run(db, run)))


if __name__ == "__main__":
    main()

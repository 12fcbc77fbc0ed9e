# SPDX-License-Identifier: Apache-2.0
"""Holds ingero-bench's verdicts on users' own jobs against the jobs' own meters
(scripts/gpu-benchmarks user-jobs). user-jobs.jsonl lists the traces in the order they were made,
so entry k is run k of the DB. Each job's log has its output lines prefixed with CLOCK_MONOTONIC
nanoseconds (bench/user_jobs/stamp_lines.py), so the meter is taken over what the trace saw:
  - the #154318 script prints data_share, the share of its DataLoader loop spent inside next();
  - pytorch/examples' imagenet/main.py prints running averages of its Time and Data meters every
    few batches ("Epoch: [0][ 40/5005]  Time 0.203 ( 0.215)  Data 0.150 ( 0.160) ..."): over a
    window, data time / batch time from the averages at its first and last line inside it.
Launched traces compare the observer's waiting share (limit 10 points); attached and system-wide
traces the wake-up estimate, or where no loader worker exists (num_workers=0, nothing waits) the
main thread's share on CPU outside CUDA calls (limit 15 points).

  python3 bench/user_jobs_summary.py --bin BIN --db DB --dir DIR --md OUT.md --json OUT.json
"""
import argparse
import json
import re
import sqlite3
import subprocess

METER = re.compile(r"\[\s*(\d+)/\s*\d+\]\s+Time\s+([\d.]+)\s+\(\s*([\d.]+)\)\s+Data\s+([\d.]+)\s+\(\s*([\d.]+)\)")
LIMITS = {"launched": 0.10, "attached": 0.15, "system": 0.15}


def stamped_lines(path):
    with open(path, errors="replace") as f:
        for line in f:
            stamp, _, text = line.partition(" ")
            if stamp.isdigit():
                yield int(stamp), text


def own_meter(path, start_ns, end_ns, whole_run=False):
    """The job's data-time share over [start_ns, end_ns] (whole_run: its running averages at its last
    line, which cover every batch as the observer does): (value, how it was read)."""
    rows = []
    for ts, text in stamped_lines(path):
        m = re.search(r"data_share ([\d.]+)", text)
        if m:
            return float(m.group(1)), "its data_share line (the whole DataLoader loop)"
        m = METER.search(text)
        if m and start_ns <= ts <= end_ns:
            rows.append((int(m.group(1)) + 1, float(m.group(3)), float(m.group(5))))
    if rows and whole_run:
        n, t, d = rows[-1]
        return d / t, "Data/Time running averages over all %d batches" % n
    if len(rows) >= 2:
        (n1, t1, d1), (n2, t2, d2) = rows[0], rows[-1]
        if n2 > n1:
            return ((d2 * n2 - d1 * n1) / (t2 * n2 - t1 * n1),
                    "Data/Time averages, batches %d-%d (inside the trace)" % (n1, n2))
    if rows:
        n, t, d = rows[-1]
        return d / t, "Data/Time running averages at batch %d" % n
    return None, "no meter line inside the trace"


def explain(binary, db, run_id):
    out = subprocess.run([binary, "explain", "--json", "--db", db, "--run", str(run_id)], capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else None


def first_chain(doc):
    chains = doc.get("causal_chains") or []
    if not chains:
        return None, [], []
    c = chains[0]
    changes = ["%s=%s" % (ch["knob"], ch["value"]) for ch in c.get("changes", [])]
    commands = [ch["command"] for ch in c.get("changes", []) if ch.get("command")]
    return c.get("cause_label") or c.get("cause"), changes, commands


def main():
    p = argparse.ArgumentParser()
    for flag in ("--bin", "--db", "--dir", "--md", "--json"):
        p.add_argument(flag, required=True)
    args = p.parse_args()
    entries = [json.loads(line) for line in open(args.dir + "/user-jobs.jsonl") if line.strip()]
    db = sqlite3.connect("file:%s?mode=ro" % args.db, uri=True)
    runs = db.execute("SELECT run_id, kind, start_ns, end_ns FROM runs ORDER BY run_id").fetchall()
    rows = []
    for entry, (run_id, kind, start_ns, end_ns) in zip(entries, runs):
        doc = explain(args.bin, args.db, run_id) or {}
        m = doc.get("metrics", {})
        meter, meter_how = own_meter(args.dir + "/" + entry["log"], start_ns, end_ns or start_ns,
                                     entry["how"] == "launched")
        ours, ours_how = m.get("wait_fraction"), m.get("wait_fraction_source") or ""
        if ours is None and m.get("main_host_share") is not None:
            ours, ours_how = m["main_host_share"], "main thread on CPU outside CUDA calls"
        cause, changes, commands = first_chain(doc)
        gap = abs(ours - meter) if ours is not None and meter is not None else None
        rows.append({"job": entry["job"], "how": entry["how"], "run_id": run_id, "kind": kind,
                     "verdict": m.get("verdict"), "ours": ours, "ours_from": ours_how, "meter": meter,
                     "meter_from": meter_how, "gap_points": None if gap is None else round(gap * 100, 1),
                     "within_limit": None if gap is None else gap <= LIMITS[entry["how"]],
                     "gpu_util": m.get("gpu_util"), "sm_active": m.get("sm_active"),
                     "main_host_share": m.get("main_host_share"), "top_cause": cause, "changes": changes,
                     "measure_with": commands})
    with open(args.json, "w") as f:
        json.dump({"runs": rows}, f, indent=2)
    pct = lambda v: "—" if v is None else "%.1f %%" % (v * 100)
    lines = ["| job | traced | run | verdict | ours | job's meter | gap (pts) | GPU busy | top cause | change |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %s | %d | %s | %s (%s) | %s | %s | %s | %s | %s |" % (
            r["job"], r["how"], r["run_id"], r["verdict"], pct(r["ours"]), r["ours_from"], pct(r["meter"]),
            "—" if r["gap_points"] is None else "%.1f%s" % (r["gap_points"], "" if r["within_limit"] else " (over)"),
            pct(r["gpu_util"]), r["top_cause"] or "—", ", ".join(r["changes"]) or "—"))
    with open(args.md, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: Apache-2.0
"""What serving live metrics costs a traced loader run: the same traced DataLoader job without
--metrics-addr and with it, scraped once a second, interleaved A/B (the order reversed every other
round, so that a machine growing busier or quieter over the rounds weighs on both sides alike).
Each run's CPU time (the tracer and the job together, from the children's rusage) per training step.
Each round gives a ratio, served over unserved, of two runs minutes apart at most: a busy machine
moves single runs by tens of percent, a ratio of neighbours much less. The summary is the median of the
per-round ratios with its spread (quartiles, min, max), beside the medians of each side, and the
machine it ran on; the issue's bar is an extra <= 0.5 % CPU.

Each served run also measures the metrics' own cost, as the trace records it: the CPU the tracer's
process spent gathering and publishing them each second and serving the scrapes (run settings
metrics_publish_cpu_ns + metrics_serve_cpu_ns) over the job's CPU time (job_user_ns + job_system_ns).
That share does not move with the machine's load the way a difference of two runs does: it is the
figure to hold against the 0.5 % bar, per round and as a median with its range; the A/B ratio says
whether anything else (the job's own slowdown) shows beside it.

  sudo python3 bench/metrics_cost.py --bin build/ingero-bench --rounds 12 --seconds 30 [--out results/x.jsonl]
  sudo python3 bench/metrics_cost.py --rounds 1 --seconds 3     # a check that it runs
"""
import argparse
import json
import os
import platform
import resource
import socket
import sqlite3
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "..", "tests", "e2e", "jobs", "train_loop.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape_every_second(port, stop, scrapes):
    while not stop.wait(1.0):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=1) as r:
                r.read()
                scrapes.append(1)
        except OSError:
            pass  # not serving yet, or already stopped


COST_KEYS = ("job_user_ns", "job_system_ns", "metrics_publish_cpu_ns", "metrics_serve_cpu_ns", "metrics_scrapes")


def metrics_cost(db):
    """The run's own measure of what the metrics cost (None for an unserved run): their CPU, each part,
    the scrapes they served, and their share of the job's CPU."""
    with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
        rows = dict(c.execute("SELECT key, value FROM run_settings WHERE key IN (%s)" % ",".join("?" * len(COST_KEYS)),
                              COST_KEYS).fetchall())
    if "metrics_publish_cpu_ns" not in rows:
        return None
    publish, serve = int(rows["metrics_publish_cpu_ns"]), int(rows.get("metrics_serve_cpu_ns", 0))
    job = int(rows.get("job_user_ns", 0)) + int(rows.get("job_system_ns", 0))
    return {"metrics_publish_ms": round(publish / 1e6, 3), "metrics_serve_ms": round(serve / 1e6, 3),
            "metrics_scrapes_served": int(rows.get("metrics_scrapes", 0)), "job_cpu_s": round(job / 1e9, 3),
            "metrics_job_share": (publish + serve) / job if job else None}


def run(args, served, db):
    port = free_port()
    cmd = [args.bin, "trace", "--db", db]
    if served:
        cmd += ["--metrics-addr", "127.0.0.1:%d" % port]
    cmd += ["--", args.python, JOB, "--workers", str(args.workers), "--sample-ms", "1", "--batch", "8",
            "--step-ms", "2", "--seconds", str(args.seconds)]
    stop, scrapes = threading.Event(), []
    scraper = threading.Thread(target=scrape_every_second, args=(port, stop, scrapes)) if served else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    if scraper:
        scraper.start()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True).stdout
    wall = time.monotonic() - start
    stop.set()
    if scraper:
        scraper.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    steps = int(out.split("steps ")[1].split()[0])
    row = {"served": served, "cpu_s": round(cpu, 3), "wall_s": round(wall, 3), "steps": steps,
           "cpu_ms_per_step": round(cpu * 1e3 / steps, 4), "scrapes": len(scrapes)}
    measured = metrics_cost(db)
    if served and not measured:
        raise SystemExit("the served run recorded no metrics_publish_cpu_ns: is %s older than the measure?" % args.bin)
    if measured:
        row.update(measured)
    return row


def machine():
    """The machine in words: CPU model, cores, kernel, load at the start (a busy machine says so)."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()
    return {"cpu": model, "cores": os.cpu_count(), "kernel": platform.release(),
            "load_1m_5m_15m": [round(x, 2) for x in load]}


def quartiles(values):
    values = sorted(values)
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def table(rows, ratios, host):
    lines = ["machine: %s, %d cores, Linux %s, load %s at the start" % (
        host["cpu"], host["cores"], host["kernel"], " / ".join(str(x) for x in host["load_1m_5m_15m"])),
        "", "| round | unserved CPU ms/step | served CPU ms/step | scrapes | served / unserved "
        "| metrics CPU ms (publish + serve) | of the job's CPU |",
        "|---:|---:|---:|---:|---:|---:|---:|"]
    for r, ratio in sorted(ratios.items()):
        a = next(x for x in rows if x["round"] == r and not x["served"])
        b = next(x for x in rows if x["round"] == r and x["served"])
        share = b["metrics_job_share"]
        lines.append("| %d | %.4f | %.4f | %d | %.4f | %.1f + %.1f | %s |" % (
            r, a["cpu_ms_per_step"], b["cpu_ms_per_step"], b["scrapes"], ratio, b["metrics_publish_ms"],
            b["metrics_serve_ms"], "%.3f %%" % (100 * share) if share is not None else "-"))
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(HERE, "..", "build", "ingero-bench"))
    p.add_argument("--python", default="/usr/bin/python3")
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out")
    args = p.parse_args()
    rows = []
    host = machine()
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(1, args.rounds + 1):
            for served in ((False, True) if r % 2 else (True, False)):
                db = os.path.join(tmp, "run.db")
                row = dict(round=r, **run(args, served, db))
                os.remove(db)
                rows.append(row)
                print(json.dumps(row), flush=True)
    ratios = {}
    for r in range(1, args.rounds + 1):
        a = next(x for x in rows if x["round"] == r and not x["served"])
        b = next(x for x in rows if x["round"] == r and x["served"])
        ratios[r] = round(b["cpu_ms_per_step"] / a["cpu_ms_per_step"], 4)
    med = {s: statistics.median(x["cpu_ms_per_step"] for x in rows if x["served"] == s) for s in (False, True)}
    shares = [x["metrics_job_share"] for x in rows if x["served"] and x["metrics_job_share"] is not None]
    ratio = statistics.median(ratios.values())
    q1, q3 = quartiles(list(ratios.values()))
    summary = {"machine": host, "rounds": args.rounds, "seconds": args.seconds, "workers": args.workers,
               "per_round_ratio": ratios, "median_ratio": ratio, "ratio_q1": q1, "ratio_q3": q3,
               "ratio_min": min(ratios.values()), "ratio_max": max(ratios.values()),
               "served_extra_pct": round(100 * (ratio - 1), 2),
               "cpu_ms_per_step_unserved": med[False], "cpu_ms_per_step_served": med[True],
               "metrics_job_share_per_round": shares,
               "metrics_job_share_median": statistics.median(shares) if shares else None,
               "metrics_job_share_min": min(shares) if shares else None,
               "metrics_job_share_max": max(shares) if shares else None}
    print(table(rows, ratios, host))
    print("\nserving at one scrape a second: %+.2f %% CPU per step (median of %d per-round ratios; quartiles "
          "%+.2f %% .. %+.2f %%, min %+.2f %%, max %+.2f %%)" % (
              100 * (ratio - 1), len(ratios), 100 * (q1 - 1), 100 * (q3 - 1), 100 * (min(ratios.values()) - 1),
              100 * (max(ratios.values()) - 1)))
    if shares:
        print("the metrics' own CPU (gathering and publishing each second, serving the scrapes): %.3f %% of the "
              "job's CPU (median of %d served runs; range %.3f %% .. %.3f %%)" % (
                  100 * statistics.median(shares), len(shares), 100 * min(shares), 100 * max(shares)))
    print(json.dumps(summary))
    if args.out:
        with open(args.out, "w") as f:
            for row in rows + [summary]:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: Apache-2.0
"""What serving live metrics costs a traced loader run: the same traced DataLoader job without
--metrics-addr and with it, scraped once a second, interleaved (the order reversed every other round).
Each run's CPU time (the tracer and the job together, from the children's rusage) per training step,
and the job's steps; the summary is the median CPU per step of each side and their difference.

  sudo python3 bench/metrics_cost.py --bin build/ingero-bench --rounds 3 --seconds 10 [--out results/x.jsonl]
"""
import argparse
import json
import os
import resource
import socket
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
    return {"served": served, "cpu_s": round(cpu, 3), "wall_s": round(wall, 3), "steps": steps,
            "cpu_ms_per_step": round(cpu * 1e3 / steps, 4), "scrapes": len(scrapes)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(HERE, "..", "build", "ingero-bench"))
    p.add_argument("--python", default="/usr/bin/python3")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out")
    args = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(1, args.rounds + 1):
            for served in ((False, True) if r % 2 else (True, False)):
                db = os.path.join(tmp, "run.db")
                row = dict(round=r, **run(args, served, db))
                os.remove(db)
                rows.append(row)
                print(json.dumps(row), flush=True)
    med = {s: statistics.median(x["cpu_ms_per_step"] for x in rows if x["served"] == s) for s in (False, True)}
    summary = {"rounds": args.rounds, "seconds": args.seconds, "cpu_ms_per_step_unserved": med[False],
               "cpu_ms_per_step_served": med[True], "served_extra_pct": round(100 * (med[True] / med[False] - 1), 2)}
    print(json.dumps(summary))
    if args.out:
        with open(args.out, "w") as f:
            for row in rows + [summary]:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

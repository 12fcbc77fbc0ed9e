# SPDX-License-Identifier: Apache-2.0
# A/B of two ingero-bench binaries on the commands that read a trace (a benchmark, not a test):
# every round runs each command with both binaries back to back, in the opposite order every
# other round, and records wall time and peak memory (from wait4). The ratio B/A is taken within
# each round, then summarised like bench/launch_summary.py (median, order-statistic interval).
# Prints a Markdown table; --json PATH also keeps every row.
# Usage: python3 bench/reader_ab.py A_BIN B_BIN [--rounds N] [--json PATH] -- 'ARGS' ['ARGS' ...]
#   e.g. ... -- '--version' 'explain --db /tmp/t.db --since 5m'
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_summary import median_interval  # noqa: E402


def run_once(binary, args):
    """(seconds, peak RSS in MB, exit code) of one run, its output discarded."""
    start = time.monotonic()
    proc = subprocess.Popen([binary] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return seconds, usage.ru_maxrss / 1024, proc.returncode


def main():
    p = argparse.ArgumentParser()
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--json")
    p.add_argument("commands", nargs="+")
    o = p.parse_args()
    rows = []
    for rnd in range(1, o.rounds + 1):
        for command in o.commands:
            order = [("A", o.a), ("B", o.b)] if rnd % 2 else [("B", o.b), ("A", o.a)]
            for side, binary in order:
                seconds, mb, code = run_once(binary, shlex.split(command))
                if code != 0:
                    sys.exit(f"reader_ab: {binary} {command} exited with {code}")
                rows.append({"round": rnd, "command": command, "side": side, "seconds": seconds, "max_rss_mb": mb})
    if o.json:
        with open(o.json, "w") as f:
            json.dump(rows, f, indent=1)
    print("| command | A: median time, peak memory | B: median time, peak memory | B/A paired: median [interval] |")
    print("|---|---|---|---|")
    for command in o.commands:
        side = {s: [r for r in rows if r["command"] == command and r["side"] == s] for s in "AB"}
        ratios = [b["seconds"] / a["seconds"] for a, b in zip(side["A"], side["B"])]
        lo, hi, cover = median_interval(ratios)
        cell = lambda rs: (f"{statistics.median(r['seconds'] for r in rs):.3f} s, "
                           f"{statistics.median(r['max_rss_mb'] for r in rs):.0f} MB")
        print(f"| `{command}` | {cell(side['A'])} | {cell(side['B'])} | "
              f"{statistics.median(ratios):.3f} [{lo:.3f}, {hi:.3f}; {cover:.0%}] |")


if __name__ == "__main__":
    main()

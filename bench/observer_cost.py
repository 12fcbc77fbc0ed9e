# SPDX-License-Identifier: Apache-2.0
# What the DataLoader observer (tracer/observer) costs a job, per batch (a benchmark, not a test).
# The loaders: an in-memory TensorDataset of 8-float samples, num_workers=0, where next() is
# cheapest and the observer's share largest:
#   collate: batch_size=4 with the default collate;  trivial: batch_size=None, an identity collate.
# 1. In one process started as `ingero-bench trace` starts a job (the observer's directory first on
#    PYTHONPATH, INGERO_OBSERVER_DIR set): each round times N next() calls with PyTorch's own
#    _BaseDataLoaderIter.__next__ put back on the class (untraced) and N with the observer's
#    (observed), in the opposite order every other round. Same process, same loader: the paired
#    difference is the observer's cost per batch.
# 2. Across processes: each round starts one plain process (no observer) and one observed, in the
#    opposite order every other round; each reports its median per-batch time.
# Per-round differences (observed - untraced, us per batch) are summarised by their median and a
# distribution-free interval (bench/launch_summary.py). The observed processes' files are read back
# to check that every observed batch was recorded. Interpreter start-up (python3 -c pass) is timed
# too: without the observer, with it on PYTHONPATH but inert (no INGERO_OBSERVER_DIR), and active.
# Run with the python that has torch (Debian: /usr/bin/python3):
#   /usr/bin/python3 bench/observer_cost.py [--rounds 16] [--process-rounds 8] [--batches 20000]
#                                           [--json PATH] [--md PATH]
import argparse
import glob
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OBSERVER_DIR = os.path.join(ROOT, "tracer", "observer")
sys.path.insert(0, HERE)
from launch_summary import median_interval  # noqa: E402

CASES = ("collate", "trivial")
NAMES = {"collate": "num_workers=0, batch_size=4, default collate",
         "trivial": "num_workers=0, batch_size=None, identity collate"}
PASSES = 3        # timed passes per case in one process of the cross-process part (median kept)
WARMUP = 2000     # untimed batches first, in each setting (first-call costs of torch and the observer)


def identity(batch):
    return batch


def make_loaders(batches):
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    torch.manual_seed(0)
    return {
        "collate": DataLoader(TensorDataset(torch.randn(4 * batches, 8)), batch_size=4),
        "trivial": DataLoader(TensorDataset(torch.randn(batches, 8)), batch_size=None, collate_fn=identity),
    }


def timed_pass(loader, batches):
    it = iter(loader)
    t0 = time.perf_counter_ns()
    for _ in range(batches):
        next(it)
    return (time.perf_counter_ns() - t0) / batches


def warm(loader):
    it = iter(loader)
    for _ in range(WARMUP):
        next(it)


def child_process(batches):
    """Part 2, in one process: prints {case: median ns per batch}."""
    result = {}
    for case, loader in make_loaders(batches).items():
        warm(loader)
        result[case] = statistics.median(timed_pass(loader, batches) for _ in range(PASSES))
    print(json.dumps(result))


def child_paired(batches, rounds):
    """Part 1, in an observed process: prints {case: [{"untraced": ns, "observed": ns}, ...]}."""
    from torch.utils.data import dataloader
    cls = dataloader._BaseDataLoaderIter
    observed = cls.__dict__["__next__"]
    untraced = getattr(observed, "__wrapped__", None)
    if untraced is None:
        sys.exit("the observer is not active in this process")
    methods = {"untraced": untraced, "observed": observed}
    result = {}
    try:
        for case, loader in make_loaders(batches).items():
            for setting in methods:
                cls.__next__ = methods[setting]
                warm(loader)
            rows = []
            for r in range(rounds):
                row = {}
                for setting in (("untraced", "observed") if r % 2 == 0 else ("observed", "untraced")):
                    cls.__next__ = methods[setting]
                    row[setting] = timed_pass(loader, batches)
                rows.append(row)
            result[case] = rows
    finally:
        cls.__next__ = observed
    print(json.dumps(result))


def job_env(setting, code_dir, out_dir):
    """plain: no observer; inert: on PYTHONPATH only; observed: as `ingero-bench trace` sets it;
    first: observed from a copy that never gets a bytecode cache (the first interpreter in a fresh
    private directory compiles both files)."""
    drop = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith("INGERO_") and k not in drop}
    if setting != "plain":
        env["PYTHONPATH"] = code_dir + "-uncached" if setting == "first" else code_dir
    if setting in ("observed", "first"):
        env["INGERO_OBSERVER_DIR"] = out_dir
    if setting == "first":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_child(setting, code_dir, out_dir, *args):
    out = subprocess.run([sys.executable, os.path.abspath(__file__)] + [str(a) for a in args],
                         env=job_env(setting, code_dir, out_dir), capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("%s child failed:\n%s" % (setting, out.stderr))
    return json.loads(out.stdout.strip().splitlines()[-1])


def recorded_rows(out_dir):
    rows = 0
    for path in glob.glob(os.path.join(out_dir, "observer-*.jsonl")):
        with open(path) as f:
            rows += sum(len(r["rows"]) for r in map(json.loads, f) if r["type"] == "batches")
    return rows


def summarise(pairs):
    """pairs: [(untraced_ns, observed_ns)] per round -> medians and the paired difference in us."""
    untraced = [u / 1e3 for u, _ in pairs]
    observed = [o / 1e3 for _, o in pairs]
    diffs = [o - u for u, o in zip(untraced, observed)]
    lo, hi, cover = median_interval(diffs)
    return {"untraced_us": statistics.median(untraced), "observed_us": statistics.median(observed),
            "diff_us": statistics.median(diffs), "diff_interval_us": [lo, hi], "coverage": cover,
            "diffs_us": diffs}


def paired_part(args, code_dir, tmp):
    out_dir = os.path.join(tmp, "paired")
    raw = run_child("observed", code_dir, out_dir, "--child-paired", "--batches", args.batches,
                    "--rounds", args.rounds)
    expected = len(CASES) * (WARMUP + args.rounds * args.batches)
    summary = {case: summarise([(r["untraced"], r["observed"]) for r in raw[case]]) for case in CASES}
    return {"rounds": args.rounds, "per_batch": summary, "rows_expected": expected,
            "rows_recorded": recorded_rows(out_dir), "raw": raw}


def process_part(args, code_dir, tmp):
    rounds = []
    for r in range(args.process_rounds):
        out_dir = os.path.join(tmp, "process%d" % r)
        order = ("plain", "observed") if r % 2 == 0 else ("observed", "plain")
        row = {"round": r, "order": list(order)}
        for setting in order:
            row[setting] = run_child(setting, code_dir, out_dir, "--child-process", "--batches", args.batches)
        row["rows_recorded"] = recorded_rows(out_dir)
        rounds.append(row)
        print("process round %d: %s" % (r, json.dumps(row)), file=sys.stderr)
    summary = {case: summarise([(r["plain"][case], r["observed"][case]) for r in rounds]) for case in CASES}
    return {"rounds": args.process_rounds, "per_batch": summary,
            "rows_expected": len(CASES) * (WARMUP + PASSES * args.batches),
            "rows_recorded": [r["rows_recorded"] for r in rounds], "raw": rounds}


def startup_part(rounds, code_dir, tmp):
    """Wall time of `python3 -c pass` per setting, interleaved, and the paired difference to plain."""
    settings = ("plain", "inert", "observed", "first")
    out_dir = os.path.join(tmp, "startup")
    subprocess.run([sys.executable, "-c", "pass"], env=job_env("observed", code_dir, out_dir), check=True)
    times = {s: [] for s in settings}
    for r in range(rounds):
        for s in (settings if r % 2 == 0 else settings[::-1]):
            env = job_env(s, code_dir, out_dir)
            t0 = time.perf_counter_ns()
            subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
            times[s].append((time.perf_counter_ns() - t0) / 1e6)
    summary = {}
    for s in settings:
        diffs = [a - b for a, b in zip(times[s], times["plain"])]
        lo, hi, cover = median_interval(diffs)
        summary[s] = {"median_ms": statistics.median(times[s]), "diff_ms": statistics.median(diffs),
                      "diff_interval_ms": [lo, hi], "coverage": cover, "runs_ms": times[s]}
    return summary


def machine():
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    except OSError:
        pass
    import torch
    return {"cpu": model, "cores": os.cpu_count(), "kernel": platform.release(),
            "python": platform.python_version(), "python_executable": sys.executable,
            "torch": torch.__version__, "load_average_at_start": list(os.getloadavg())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=16, help="paired rounds in one process (at least 8)")
    ap.add_argument("--process-rounds", type=int, default=8, help="plain/observed process pairs (at least 8)")
    ap.add_argument("--batches", type=int, default=20000, help="next() calls per timed pass")
    ap.add_argument("--startup-rounds", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--md")
    ap.add_argument("--child-process", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--child-paired", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_process:
        return child_process(args.batches)
    if args.child_paired:
        return child_paired(args.batches, args.rounds)
    if args.rounds < 8 or args.process_rounds < 8:
        sys.exit("--rounds and --process-rounds must be at least 8")
    result = {"benchmark": "observer_cost",
              "command": " ".join([sys.executable, os.path.relpath(os.path.abspath(__file__), ROOT)] + sys.argv[1:]),
              "machine": machine(), "batches_per_pass": args.batches, "warmup_batches": WARMUP}
    with tempfile.TemporaryDirectory(prefix="observer-cost-") as tmp:
        code_dir = os.path.join(tmp, "observer-code")  # a private copy, as the harness writes one
        for copy in (code_dir, code_dir + "-uncached"):
            shutil.copytree(OBSERVER_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
        result["in_process"] = paired_part(args, code_dir, tmp)
        result["across_processes"] = process_part(args, code_dir, tmp)
        result["startup"] = startup_part(args.startup_rounds, code_dir, tmp)
    result["machine"]["load_average_at_end"] = list(os.getloadavg())
    md = markdown(result)
    print(md)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)


def cost_table(part, left, right):
    lines = ["| case | next() %s | next() observed | observer cost per batch: median [interval, coverage] "
             "| per-round differences (µs) |" % left, "|---|---|---|---|---|"]
    for case, s in part["per_batch"].items():
        lines.append("| %s | %.2f µs | %.2f µs | **%+.2f µs** [%+.2f, %+.2f; %.0f %%] | %s |" % (
            NAMES[case], s["untraced_us"], s["observed_us"], s["diff_us"], s["diff_interval_us"][0],
            s["diff_interval_us"][1], 100 * s["coverage"], ", ".join("%+.2f" % d for d in s["diffs_us"])))
    return lines


def recorded(part):
    got = part["rows_recorded"] if isinstance(part["rows_recorded"], list) else [part["rows_recorded"]]
    if all(n == part["rows_expected"] for n in got):
        return "every observed batch was recorded (%d rows per observed process)" % part["rows_expected"]
    return "NOT every observed batch was recorded: %s of %d rows" % (got, part["rows_expected"])


def markdown(res):
    m, paired, across = res["machine"], res["in_process"], res["across_processes"]
    load = lambda xs: " / ".join("%.2f" % x for x in xs)  # noqa: E731
    lines = [
        "# DataLoader observer: cost per batch (CPU)",
        "",
        "Machine: %s, %d cores, Linux %s; Python %s (`%s`), torch %s. Load average (1/5/15 min) %s at the "
        "start, %s at the end." % (m["cpu"], m["cores"], m["kernel"], m["python"], m["python_executable"],
                                   m["torch"], load(m["load_average_at_start"]), load(m["load_average_at_end"])),
        "",
        "Command: `%s`" % res["command"],
        "",
        "## In one observed process (the cost itself)",
        "",
        "%d rounds; each times %d next() calls with PyTorch's own `_BaseDataLoaderIter.__next__` put back on "
        "the class (untraced) and %d with the observer's (observed), in the opposite order every other "
        "round, after %d untimed calls in each. The difference is taken within each round; its interval is "
        "distribution-free (order statistics of the per-round differences); %s."
        % (paired["rounds"], res["batches_per_pass"], res["batches_per_pass"], res["warmup_batches"],
           recorded(paired)),
        "",
    ] + cost_table(paired, "untraced", "observed") + [
        "",
        "## Across processes (the whole job, noisier)",
        "",
        "%d rounds of one plain process (observer not on PYTHONPATH) and one observed process (started as "
        "`ingero-bench trace` starts a job), in the opposite order every other round; each process reports "
        "the median of %d passes of %d next() calls; %s." % (across["rounds"], PASSES, res["batches_per_pass"],
                                                             recorded(across)),
        "",
    ] + cost_table(across, "plain", "observed") + [
        "",
        "## Interpreter start-up",
        "",
        "`python3 -c pass`, %d interleaved runs per setting (the difference to plain is paired within a run). "
        "The observer's directory is a private copy, as the harness writes one; its bytecode is cached "
        "after the first interpreter, except in the last row (a copy without one)." % len(res["startup"]["plain"]["runs_ms"]),
        "",
        "| setting | median | difference to plain: median [interval, coverage] |",
        "|---|---|---|",
    ]
    labels = {"plain": "observer not on PYTHONPATH", "inert": "on PYTHONPATH, no INGERO_OBSERVER_DIR (inert)",
              "observed": "on PYTHONPATH, INGERO_OBSERVER_DIR set (active)",
              "first": "active, no bytecode cache (the first interpreter in a fresh directory)"}
    for s, v in res["startup"].items():
        lines.append("| %s | %.1f ms | %s |" % (labels[s], v["median_ms"], "–" if s == "plain" else
                     "%+.2f ms [%+.2f, %+.2f; %.0f %%]" % (v["diff_ms"], v["diff_interval_ms"][0],
                                                          v["diff_interval_ms"][1], 100 * v["coverage"])))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

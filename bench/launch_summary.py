# SPDX-License-Identifier: Apache-2.0
# Summarises scripts/gpu-benchmarks' launch.jsonl (one row per loop run) as a Markdown table:
# for each loop and tracer setting, the median loop time and the traced/untraced ratio of each
# round (the two runs of a round are adjacent, so a drift of the machine cancels), with the
# median of those paired ratios and a distribution-free interval for it (order statistics of
# the binomial(n, 1/2): the narrowest with at least 90 % coverage, or min-max with its coverage
# when the rounds are too few for 90 %). A second table takes what the wall time cannot resolve on
# a drifting lease: the traps' cost as the loop thread's system time (traced − untraced of the same
# round, ÷ the untraced loop time), the cost the run reported of itself on the same scale, and the
# launch count's estimate against the exact count (the launches, the 1,000 warm-up launches and the
# sync's: launches + 1,001, or TRUTH).
# Usage: [TRUTH=N] python3 bench/launch_summary.py launch.jsonl
import collections
import json
import math
import os
import statistics
import sys


def median_interval(values, coverage=0.90):
    """(low, high, coverage): order statistics around the median covering it with at least `coverage`,
    or the min and max (and what they cover) when there are too few values for it."""
    xs = sorted(values)
    n = len(xs)
    if n < 2:
        return xs[0], xs[0], 0.0
    below = lambda k: sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n  # P(Binomial(n, 1/2) <= k)
    k = 0
    while k + 1 < n // 2 and 1 - 2 * below(k + 1) >= coverage:
        k += 1
    # P(x_(k+1) <= median <= x_(n-k)) = 1 - 2 P(B <= k)
    return xs[k], xs[n - 1 - k], 1 - 2 * below(k)


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    times = collections.defaultdict(list)
    by_round = collections.defaultdict(dict)
    for r in rows:
        if r.get("seconds") in (None, ""):
            continue
        times[(r["impl"], r["setting"])].append(r["seconds"])
        by_round[(r["impl"], r["round"])][r["setting"]] = r["seconds"]
    impls = list(dict.fromkeys(r["impl"] for r in rows))
    settings = list(dict.fromkeys(r["setting"] for r in rows))
    print("| loop | setting | runs | median loop time | launches/s | paired ratio to untraced: median "
          "[interval, its coverage] | per-round ratios |")
    print("|---|---|---|---|---|---|---|")
    for impl in impls:
        launches = next(r["launches"] for r in rows if r["impl"] == impl)
        for s in settings:
            t = times.get((impl, s))
            if not t:
                continue
            med = statistics.median(t)
            ratios = [v[s] / v["untraced"] for (i, _), v in sorted(by_round.items())
                      if i == impl and s in v and "untraced" in v and s != "untraced"]
            if ratios:
                lo, hi, cover = median_interval(ratios)
                paired = "%.3f [%.3f, %.3f; %.0f %%]" % (statistics.median(ratios), lo, hi, 100 * cover)
                per_round = ", ".join("%.2f" % x for x in ratios)
            else:
                paired, per_round = "–", "–"
            print("| %s | %s | %d | %.3f s | %.0f K | %s | %s |"
                  % (impl, s, len(t), med, launches / med / 1e3, paired, per_round))

    cost_table(rows)


def spread(values, fmt="%.1f"):
    return (fmt + " [" + fmt + ", " + fmt + "]") % (statistics.median(values), min(values), max(values))


def cost_table(rows):
    """Per loop and traced setting: the traps' system time, the self-reported cost and the estimate."""
    by_round = collections.defaultdict(dict)
    for r in rows:
        by_round[(r["impl"], r["round"])][r["setting"]] = r
    print()
    print("| loop | setting | rounds | traps' system time ÷ untraced loop, %: median [range] | self-reported ÷ "
          "untraced loop, % | reported − measured, points: range | count error, %: median [range] | "
          "within ±5 % | interval covers |")
    print("|---|---|---|---|---|---|---|---|---|")
    keys = list(dict.fromkeys((r["impl"], r["setting"]) for r in rows if r["setting"] != "untraced"))
    for impl, s in keys:
        system, reported, errors, covers = [], [], [], []
        for (i, _), v in sorted(by_round.items()):
            u, t = v.get("untraced"), v.get(s)
            if i != impl or not t or not u or not u.get("seconds") or t.get("sys_s") is None:
                continue
            system.append(100 * (t["sys_s"] - u["sys_s"]) / u["seconds"])
            if t.get("self_cost_ns") is not None:
                reported.append(100 * t["self_cost_ns"] / 1e9 / u["seconds"])
            if t.get("estimated"):
                truth = int(os.environ.get("TRUTH", t["launches"] + 1001))
                errors.append(100 * (t["count"] - truth) / truth)
                covers.append(t["count_low"] <= truth <= t["count_high"])
        if not system:
            continue
        diffs = [a - b for a, b in zip(reported, system)] if len(reported) == len(system) else []
        print("| %s | %s | %d | %s | %s | %s | %s | %s | %s |" % (
            impl, s, len(system), spread(system), spread(reported) if reported else "–",
            "%+.1f to %+.1f" % (min(diffs), max(diffs)) if diffs else "–",
            spread(errors) if errors else "exact", "%d of %d" % (sum(abs(e) <= 5 for e in errors), len(errors)) if errors else "–",
            "%d of %d" % (sum(covers), len(covers)) if covers else "–"))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 bench/launch_summary.py launch.jsonl")
    main(sys.argv[1])

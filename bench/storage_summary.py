#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One line per run of the on-disk dataset family (scripts/gpu-benchmarks storage): where the dataset
lived, the epochs, the verdict and the first causes, from `ingero-bench explain --json`.

  python3 bench/storage_summary.py BIN DB > storage.jsonl     # every run of DB
  python3 bench/storage_summary.py --table storage.jsonl      # the Markdown table of those lines
"""
import json
import sqlite3
import subprocess
import sys


def explain(binary, db, run_id):
    out = subprocess.run([binary, "explain", "--json", "--db", db, "--run", str(run_id)],
                         capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else None


def row_of(run_id, label, config, result, report):
    config = json.loads(config) if config else {}
    result = json.loads(result) if result else {}
    storage = result.get("storage") or {}
    m = (report or {}).get("metrics", {})
    chains = [c for c in (report or {}).get("causal_chains", []) if c["victim"] == "batch_wait"]
    return {
        "run": run_id, "label": label, "mode": config.get("mode"), "workers": config.get("num_workers"),
        "storage": config.get("storage", "memory"), "page_cache": config.get("page_cache"),
        "format": config.get("format", "raw"), "status": result.get("status"),
        "epoch_median_s": m.get("epoch_median_s"), "wait_fraction": m.get("wait_fraction"),
        "verdict": m.get("verdict"), "io": m.get("io"),
        "causes": [{"cause": c["cause"], "share": c["share_of_victim"], "severity": c["severity"]}
                   for c in chains[:3]],
        "changes": [f"{k['knob']}={k['value']}" for c in chains[:1] for k in c.get("changes", [])],
        "resident_before_epochs": storage.get("epochs"), "device": storage.get("device"),
    }


def table(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    print("| storage | page cache | mode | workers | epoch median | waiting | verdict | causes of the waits (share) "
          "| read MB/s (device's) | change named first |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        io = r.get("io") or {}
        rate = f"{io['read_mb_s']:.1f}" if io.get("read_mb_s") is not None else "–"
        if io.get("device_read_mb_s"):
            rate += f" ({io['device_read_mb_s']:.0f})"
        causes = ", ".join(f"{c['cause']} {c['share'] * 100:.0f} %" for c in r["causes"]) or "–"
        median = f"{r['epoch_median_s']:.3f} s" if r.get("epoch_median_s") is not None else r.get("status") or "–"
        waiting = f"{r['wait_fraction'] * 100:.0f} %" if r.get("wait_fraction") is not None else "–"
        storage = r["storage"] if r.get("format", "raw") == "raw" else f"{r['storage']} ({r['format']})"
        print(f"| {storage} | {r.get('page_cache') or '–'} | {r['mode']} | {r['workers']} | {median} | {waiting} "
              f"| {(r.get('verdict') or '–').split(' (')[0]} | {causes} | {rate} | {', '.join(r['changes']) or '–'} |")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--table":
        return table(sys.argv[2])
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, db = sys.argv[1:]
    runs = sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute(
        "SELECT run_id, label, config_json, result_json FROM runs ORDER BY run_id").fetchall()
    for run_id, label, config, result in runs:
        print(json.dumps(row_of(run_id, label, config, result, explain(binary, db, run_id))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

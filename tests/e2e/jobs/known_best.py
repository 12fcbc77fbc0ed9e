# SPDX-License-Identifier: Apache-2.0
"""A training loop whose step time is set by its DataLoader's num_workers, so that a sweep's best
point is known by construction: each step sleeps the time --step-ms gives for the loader's
num_workers (as the sweep's override left it), e.g. 0:45,2:30,4:20. Data costs next to nothing.

--noisy-first-run 2 makes the first run at 2 workers (counted in --state-dir) uneven: after
--warmup steps, windows of --window steps alternate between 1.2x and 0.5x its step time, so that
its interval after one run reaches below faster points while its median does not.

--detach-sleep S starts `sleep S` in a session of its own (as a job starts TensorBoard or a data
server) that outlives the job.

  python3 known_best.py --step-ms 0:45,2:30,4:20 --noisy-first-run 2 --state-dir D --warmup 3 --window 3
"""
import argparse
import os
import subprocess
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Cheap(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.full((4,), float(i))


def run_number(state_dir, workers):
    """1 for the first run at this num_workers, then 2, ..."""
    path = os.path.join(state_dir, "runs-w%d" % workers)
    n = int(open(path).read()) + 1 if os.path.exists(path) else 1
    with open(path + ".tmp", "w") as f:
        f.write(str(n))
    os.rename(path + ".tmp", path)
    return n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--step-ms", required=True)
    p.add_argument("--noisy-first-run", type=int, action="append", default=[])
    p.add_argument("--state-dir")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--window", type=int, default=3)
    p.add_argument("--detach-sleep")
    p.add_argument("--seconds", type=float, default=100)
    p.add_argument("--samples", type=int, default=4096)
    args = p.parse_args()
    if args.detach_sleep:
        subprocess.Popen(["sleep", args.detach_sleep], start_new_session=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    step_ms = {int(k): float(v) for k, v in (item.split(":") for item in args.step_ms.split(","))}
    loader = DataLoader(Cheap(args.samples), batch_size=8, num_workers=args.workers)
    workers = loader.num_workers
    ms = step_ms[workers]
    noisy = workers in args.noisy_first_run and args.state_dir and run_number(args.state_dir, workers) == 1
    steps = 0
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        for batch in loader:
            t = ms
            if noisy and steps >= args.warmup:
                t = ms * (1.2 if ((steps - args.warmup) // args.window) % 2 == 0 else 0.5)
            time.sleep(t / 1e3)
            steps += 1
            if time.monotonic() >= deadline:
                break
    print("steps %d" % steps, flush=True)


if __name__ == "__main__":
    main()

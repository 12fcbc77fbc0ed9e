# SPDX-License-Identifier: Apache-2.0
"""A training loop of the kind users trace, written without ingero-bench in mind: a torch
DataLoader whose per-sample work costs a known CPU time, and a step that costs another. With
fewer workers than the sample work needs, the loop waits for data most of each step; its own
meter (data time / step time, measured as every training script measures it) is printed so the
tests can hold ingero-bench's verdict against it.

  python3 train_loop.py --workers 1 --sample-ms 1 --batch 8 --step-ms 2 --seconds 6 [--pid-file F]

--sample-wait-ms makes each sample wait instead (sleep, as a read from storage does) rather than spin.
--shuffle draws each epoch's order (RandomSampler: a permutation of every index when the epoch starts);
--no-persistent starts the workers again every epoch. --steady-after S leaves the first S seconds out of
the meter (the workers' start-up), as a steady meter does.
"""
import argparse
import os
import time

import torch
from torch.utils.data import DataLoader, Dataset


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class CostlySamples(Dataset):
    def __init__(self, n, sample_s, wait_s):
        self.n, self.sample_s, self.wait_s = n, sample_s, wait_s

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        spin(self.sample_s)
        if self.wait_s:
            time.sleep(self.wait_s)
        return torch.full((4,), float(i))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--sample-ms", type=float, default=1.0)
    p.add_argument("--sample-wait-ms", type=float, default=0.0)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--step-ms", type=float, default=2.0)
    p.add_argument("--seconds", type=float, default=6.0)
    p.add_argument("--samples", type=int, default=4096)
    p.add_argument("--shuffle", action="store_true")
    p.add_argument("--no-persistent", action="store_true")
    p.add_argument("--steady-after", type=float, default=0.0)
    p.add_argument("--pid-file")
    args = p.parse_args()
    if args.pid_file:
        with open(args.pid_file + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(args.pid_file + ".tmp", args.pid_file)
    loader = DataLoader(CostlySamples(args.samples, args.sample_ms / 1e3, args.sample_wait_ms / 1e3), batch_size=args.batch,
                        num_workers=args.workers, persistent_workers=args.workers > 0 and not args.no_persistent,
                        shuffle=args.shuffle)
    data_s = step_s = 0.0
    steps, checksum = 0, 0.0
    deadline = time.monotonic() + args.seconds
    steady_from = time.monotonic() + args.steady_after
    while time.monotonic() < deadline:
        end = time.perf_counter()
        for batch in loader:
            metered = time.monotonic() >= steady_from
            if metered:
                data_s += time.perf_counter() - end
            spin(args.step_ms / 1e3)
            checksum += float(batch.sum())
            steps += 1
            if metered:
                step_s += time.perf_counter() - end
            end = time.perf_counter()
            if time.monotonic() >= deadline:
                break
    print("steps %d data_share %.4f checksum %.1f" % (steps, data_s / step_s, checksum), flush=True)


if __name__ == "__main__":
    main()

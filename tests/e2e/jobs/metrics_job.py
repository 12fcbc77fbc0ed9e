# SPDX-License-Identifier: Apache-2.0
"""A DataLoader job for the live metrics tests: whole epochs (the observer writes each epoch's batches
as it ends), then it lingers, so that a scrape a second apart sees the final values.

With --ranks N it starts N ranks as torchrun's local agent does (each exec'd with RANK, LOCAL_RANK,
WORLD_SIZE, MASTER_ADDR and MASTER_PORT; Debian's torch 1.13 torchrun fails under Python 3.11). The ranks
all-reduce each step over Gloo, and the samples of --slow-rank take --slow-sample-ms: that rank waits for
data while the others wait for it in the all-reduce (a straggler by construction).

  python3 metrics_job.py --epochs 2 --samples 128 --batch 8 --sample-ms 5 --linger 3
  python3 metrics_job.py --ranks 2 --slow-rank 1 --slow-sample-ms 15
"""
import argparse
import os
import socket
import subprocess
import sys
import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset


class SleepySamples(Dataset):
    def __init__(self, n, sample_s):
        self.n, self.sample_s = n, sample_s

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(self.sample_s)  # as a read from storage waits
        return torch.full((4,), float(i))


def launch(ranks):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv, skip = [], False  # the ranks' arguments: these without --ranks N
    for a in sys.argv[1:]:
        if skip or a.startswith("--ranks="):
            skip = False
        elif a == "--ranks":
            skip = True
        else:
            argv.append(a)
    procs = []
    for rank in range(ranks):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(ranks),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__)] + argv, env=env))
    return max(p.wait() for p in procs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--samples", type=int, default=128)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--sample-ms", type=float, default=5.0)
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--slow-sample-ms", type=float, default=20.0)
    p.add_argument("--linger", type=float, default=3.0)
    p.add_argument("--ranks", type=int, default=0, help="start this many ranks (this process only launches them)")
    args = p.parse_args()
    if args.ranks:
        return launch(args.ranks)
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        dist.init_process_group("gloo")
    sample_ms = args.slow_sample_ms if rank == args.slow_rank else args.sample_ms
    loader = DataLoader(SleepySamples(args.samples, sample_ms / 1e3), batch_size=args.batch,
                        num_workers=args.workers, persistent_workers=args.workers > 0)
    total = 0.0
    for _ in range(args.epochs):
        for batch in loader:
            step = batch.sum()
            if world > 1:
                dist.all_reduce(step)
            total += float(step)
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    print("rank %d checksum %.1f" % (rank, total), flush=True)
    time.sleep(args.linger)


if __name__ == "__main__":
    sys.exit(main())

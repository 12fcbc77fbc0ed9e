# SPDX-License-Identifier: Apache-2.0
"""A job that forks mid-epoch: python3 fork_job.py. The parent takes 5 batches (the observer
writes the first at once and buffers the next four), forks, and finishes the epoch; the child takes
3 more batches from the inherited iterator, runs one epoch of a new DataLoader, and exits through
its atexit handlers (where the observer flushes) and os._exit: a forked torch process takes seconds
to finalize otherwise. Each prints its pid and the batches it took."""
import atexit
import os
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

dataset = TensorDataset(torch.arange(64.0).reshape(32, 2))
it = iter(DataLoader(dataset, batch_size=2))
for _ in range(5):
    next(it)
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    for _ in range(3):
        next(it)
    n = sum(1 for _ in DataLoader(dataset, batch_size=8))
    print("child", os.getpid(), n, flush=True)
    atexit._run_exitfuncs()
    os._exit(0)
rest = sum(1 for _ in it)
_, status = os.waitpid(pid, 0)
print("parent", os.getpid(), 5 + rest, os.waitstatus_to_exitcode(status), flush=True)

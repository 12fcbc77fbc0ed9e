# SPDX-License-Identifier: Apache-2.0
"""A job to be stopped by a signal: python3 slow_job.py. Iterates a DataLoader (num_workers=0)
forever at about 50 batches a second, printing "batch EPOCH INDEX" after each."""
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(torch.arange(400.0).reshape(200, 2)), batch_size=2)
epoch = 0
while True:
    for i, _ in enumerate(loader):
        print("batch", epoch, i, flush=True)
        time.sleep(0.02)
    epoch += 1

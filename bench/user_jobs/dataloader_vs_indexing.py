# SPDX-License-Identifier: Apache-2.0
"""The script of pytorch/pytorch#154318, as its reporter wrote it in spirit: MLP inference over an
in-memory tensor, first by direct indexing, then through a plain DataLoader(X, batch_size=B,
shuffle=True). It knows nothing of ingero-bench. Its own meters: each loop's wall time, and for the
DataLoader loop the share of the loop spent inside next() (the data time every training script
measures), printed as 'data_share'.

  python3 dataloader_vs_indexing.py [--samples 7000000] [--batch 1048576] [--workers 0] [--epochs 1]
"""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--samples", type=int, default=7_000_000)
    p.add_argument("--features", type=int, default=100)
    p.add_argument("--batch", type=int, default=1_048_576)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--epochs", type=int, default=1)
    args = p.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    X = torch.randn(args.samples, args.features)
    model = nn.Sequential(nn.Linear(args.features, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10)).to(device)
    with torch.no_grad():
        t0 = time.perf_counter()
        for _ in range(args.epochs):
            for i in range(0, args.samples, args.batch):
                model(X[i:i + args.batch].to(device))
        if device == "cuda":
            torch.cuda.synchronize()
        direct_s = time.perf_counter() - t0
        print("direct: %.3f s" % direct_s, flush=True)

        loader = DataLoader(X, batch_size=args.batch, shuffle=True, num_workers=args.workers)
        data_s = 0.0
        t0 = time.perf_counter()
        for _ in range(args.epochs):
            it = iter(loader)
            while True:
                w = time.perf_counter()
                try:
                    batch = next(it)
                except StopIteration:
                    break
                data_s += time.perf_counter() - w
                model(batch.to(device))
        if device == "cuda":
            torch.cuda.synchronize()
        loader_s = time.perf_counter() - t0
        print("dataloader: %.3f s (%.1fx direct) data_share %.4f" % (loader_s, loader_s / direct_s, data_s / loader_s),
              flush=True)


if __name__ == "__main__":
    main()

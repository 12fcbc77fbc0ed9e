# SPDX-License-Identifier: Apache-2.0
# A launch-bound PyTorch loop: N tiny kernels (x.add_(1) on one float on the GPU).
# Prints {"launches": N, "seconds": loop time}, like bench/launch_loop.cc.
import json
import sys
import time

import torch

launches = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
if not torch.cuda.is_available():
    sys.exit("launch_loop.py needs a CUDA device")
x = torch.zeros(1, device="cuda")
with torch.no_grad():
    for _ in range(1000):
        x.add_(1)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(launches):
        x.add_(1)
    torch.cuda.synchronize()
print(json.dumps({"launches": launches, "seconds": time.perf_counter() - start}))

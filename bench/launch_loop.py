# SPDX-License-Identifier: Apache-2.0
# A launch-bound PyTorch loop: N tiny kernels (x.add_(1) on one float on the GPU).
# Prints {"launches": N, "seconds": loop time, and the loop thread's own rusage over the loop},
# like bench/launch_loop.cc: a uprobe's trap is charged to the trapping thread as system time.
import array
import json
import os
import resource
import sys
import time

import torch

launches = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
if not torch.cuda.is_available():
    sys.exit("launch_loop.py needs a CUDA device")
# LAUNCH_TIMES=FILE keeps each launch's CLOCK_MONOTONIC time, as bench/call_times.h does.
times_path = os.environ.get("LAUNCH_TIMES")
times = array.array("q")
mark = time.monotonic_ns


def run(n):
    if times_path:
        for _ in range(n):
            times.append(mark())
            x.add_(1)
    else:
        for _ in range(n):
            x.add_(1)


x = torch.zeros(1, device="cuda")
with torch.no_grad():
    run(1000)
    torch.cuda.synchronize()
    before = resource.getrusage(resource.RUSAGE_THREAD)
    start = time.perf_counter()
    run(launches)
    torch.cuda.synchronize()
seconds = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_THREAD)
print(json.dumps({"launches": launches, "seconds": seconds, "user_s": round(after.ru_utime - before.ru_utime, 4),
                  "sys_s": round(after.ru_stime - before.ru_stime, 4),
                  "ctx_voluntary": after.ru_nvcsw - before.ru_nvcsw,
                  "ctx_involuntary": after.ru_nivcsw - before.ru_nivcsw,
                  "minor_faults": after.ru_minflt - before.ru_minflt}))
if times_path:
    with open(times_path, "wb") as f:
        times.tofile(f)

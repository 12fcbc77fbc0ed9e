#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Touches 1 GiB of fresh anonymous memory a page at a time (4 x 256 MiB): a loop of page faults
# and page allocations, for what the memory programs cost a job that faults.
import mmap, time, sys
n = int(sys.argv[1]) if len(sys.argv) > 1 else 256 << 20
t = time.perf_counter()
for r in range(4):
    m = mmap.mmap(-1, n)
    for off in range(0, n, 4096): m[off] = 1
    m.close()
print(f"LOOP {time.perf_counter() - t:.4f}")

# SPDX-License-Identifier: Apache-2.0
# Calls a CUDA runtime's cudaDeviceSynchronize from a Python function of its own (through ctypes),
# so that the tracer's stored calls carry a stack naming that function, this file and the call's line.
#   call_stack.py LIBRARY CALLS
import ctypes
import sys
import time


def wait_for_gpu(runtime):
    return runtime.cudaDeviceSynchronize()  # line 11: the stored calls' Python line


def main():
    runtime = ctypes.CDLL(sys.argv[1])
    time.sleep(1.5)  # the tracer finds this interpreter's layout meanwhile
    for _ in range(int(sys.argv[2])):
        wait_for_gpu(runtime)
        time.sleep(0.05)


main()

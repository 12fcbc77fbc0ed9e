# SPDX-License-Identifier: Apache-2.0
# A job whose CPU split is known by its own timers, for the CPU profile tests: the main thread
# computes in burn_a about 70 % of the time and in burn_b about 30 %, alternating in short turns,
# and writes the thread CPU time it measured in each to the file named by its first argument.
import json
import sys
import time


def spin(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for i in range(2000):
            x += i * i
    return x


def burn_a(seconds):
    return spin(seconds)


def burn_b(seconds):
    return spin(seconds)


def main():
    out, total = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    spent = {"burn_a": 0.0, "burn_b": 0.0}
    turn = 0.05
    deadline = time.thread_time() + total
    while time.thread_time() < deadline:
        for name, fn, share in (("burn_a", burn_a, 0.7), ("burn_b", burn_b, 0.3)):
            start = time.thread_time()
            fn(turn * share)
            spent[name] += time.thread_time() - start
    with open(out, "w") as f:
        json.dump(spent, f)


if __name__ == "__main__":
    main()

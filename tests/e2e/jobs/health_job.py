# SPDX-License-Identifier: Apache-2.0
"""DataLoader jobs that fail the ways users' jobs fail, each in seconds on a CPU machine, and one that
does not. The test that runs each sets the scene (a memory-limited cgroup, a small /dev/shm, a low
ulimit -n) and checks that ingero-bench names what happened.

  python3 health_job.py cow       a list of 3 M small Python tuples read by 2 workers: each worker's
                                  private memory grows by copy-on-write as it touches the objects
  python3 health_job.py oom       workers that keep what they allocate, until the OOM killer of the
                                  memory-limited cgroup the test runs this in kills one
  python3 health_job.py shm       8 MB batches, 2 workers x prefetch_factor 2, under a 16 MB /dev/shm:
                                  a worker dies of SIGBUS
  python3 health_job.py fds       the loop keeps every batch it received (4 tensors each) under the
                                  file_descriptor strategy: its descriptors climb to the ulimit -n the
                                  test set; it stops at 90 % of it
  python3 health_job.py deadlock  a thread holds a lock while the DataLoader forks; each worker takes it
                                  and waits forever; the loader's timeout ends the job
  python3 health_job.py healthy   a short, ordinary loop
"""
import os
import sys
import threading
import time

import torch
from torch.utils.data import DataLoader, Dataset


class TouchTuples(Dataset):
    """Item i sums its share of a list of Python tuples: reading each object writes its refcount."""

    def __init__(self, items, per_item_s):
        self.rows = [(i, i * 2) for i in range(3_000_000)]
        self.items, self.per_item_s = items, per_item_s

    def __len__(self):
        return self.items

    def __getitem__(self, i):
        chunk = len(self.rows) // self.items
        total = 0
        for row in self.rows[i * chunk:(i + 1) * chunk]:
            total += row[0]
        end = time.perf_counter() + self.per_item_s
        while time.perf_counter() < end:  # a worker's own work on the sample
            pass
        return torch.tensor([total], dtype=torch.float64)


class Hoard(Dataset):
    """Each item allocates 32 MB that the worker keeps."""

    kept = []

    def __len__(self):
        return 10_000

    def __getitem__(self, i):
        block = bytearray(32 << 20)  # zeroed: every page written
        Hoard.kept.append(block)
        time.sleep(0.2)
        return torch.zeros(1)


class Big(Dataset):
    """later_s: items after the first wait that long, so that the first batch reaches the loop (and
    its bytes are counted) before the workers fill /dev/shm together."""

    def __init__(self, mb, later_s=0.0):
        self.elements = (mb << 20) // 4
        self.later_s = later_s

    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i > 0:
            time.sleep(self.later_s)
        return torch.full((self.elements,), float(i))


class Several(Dataset):
    def __len__(self):
        return 100_000

    def __getitem__(self, i):
        return [torch.full((4,), float(i + k)) for k in range(4)]


held = threading.Lock()


class Locked(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        with held:  # in a forked worker, held by a thread that does not exist there
            return torch.zeros(1)


def fd_count():
    return len(os.listdir("/proc/self/fd"))


def main():
    case = sys.argv[1]
    if case == "cow":
        loader = DataLoader(TouchTuples(200, 0.04), batch_size=4, num_workers=2)
        for _ in loader:
            pass
    elif case == "oom":
        for _ in DataLoader(Hoard(), batch_size=1, num_workers=2):
            pass
    elif case == "shm":
        for _ in DataLoader(Big(8, later_s=0.3), batch_size=1, num_workers=2, prefetch_factor=2):
            time.sleep(0.2)
    elif case == "fds":
        torch.multiprocessing.set_sharing_strategy("file_descriptor")
        import resource
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        kept = []
        for batch in DataLoader(Several(), batch_size=1, num_workers=2):
            kept.append(batch)
            if fd_count() >= 0.95 * limit:
                break
            time.sleep(0.1)
        print("kept", len(kept), "batches holding", fd_count(), "descriptors of", limit)
        time.sleep(1.0)  # the loop would go on holding them
    elif case == "deadlock":
        def hold():
            with held:
                time.sleep(30)
        threading.Thread(target=hold, daemon=True).start()
        time.sleep(0.1)
        batches = iter(DataLoader(Locked(), batch_size=1, num_workers=2, timeout=5))
        try:
            next(batches)
        except RuntimeError as e:
            print("the loader gave up:", e)
            for worker in batches._workers:  # stuck: they would wait for the lock forever
                worker.terminate()
            os._exit(3)  # the lock holder would keep the interpreter's exit waiting
    elif case == "healthy":
        for _ in DataLoader(Big(1), batch_size=2, num_workers=2):
            time.sleep(0.1)
    else:
        sys.exit("unknown case " + case)


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: Apache-2.0
"""A DataLoader job for tests/observer: python3 loader_job.py CONFIG_JSON.

CONFIG: {"facts": PATH, "samples": 48, "raise_at": null, "sleep_s": 0,
         "loaders": [{"num_workers": 0, "batch_size": 4, "epochs": 2, "shuffle": true,
                      "persistent_workers": false, "prefetch_factor": null, "pin_memory": false,
                      "context": null, "positional": false, "odd_collate": false}, ...]}
Prints one line per batch (loader, epoch, index, the batch's sums), so two runs can be compared
line for line. Writes to FACTS what only the job knows: the arguments it passed, its main thread's
native id, the pin-memory thread it saw, and the monotonic time around its loops; each worker
appends "worker_id pid init_end_ns" to FACTS.workers from its worker_init_fn.
"""
import functools
import json
import os
import sys
import threading
import time

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data._utils.collate import default_collate


class Rows(Dataset):
    """dataset[i] -> (row i, i); raises ValueError at raise_at, like a corrupt sample."""

    def __init__(self, data, raise_at):
        self.data = data
        self.raise_at = raise_at

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        if i == self.raise_at:
            raise ValueError("bad sample %d" % i)
        return self.data[i], i


class OddCollate:
    """A collate_fn object that fails every attribute lookup, as some proxies do: PyTorch only calls
    it, but describing it is harder."""

    def __getattr__(self, name):
        raise RuntimeError("OddCollate has no attribute %s" % name)

    def __call__(self, batch):
        return default_collate(batch)


def worker_init(path, worker_id):
    time.sleep(0.01)  # a visible init, so "ready after init" is distinguishable from "at entry"
    line = "%d %d %d\n" % (worker_id, os.getpid(), time.monotonic_ns())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def make_loader(dataset, spec, init_fn):
    """Passes the arguments by keyword, or positionally up to num_workers when spec["positional"]."""
    generator = torch.Generator()
    generator.manual_seed(1234)
    passed = {"batch_size": spec.get("batch_size", 4), "shuffle": spec.get("shuffle", True),
              "num_workers": spec.get("num_workers", 0), "pin_memory": spec.get("pin_memory", False),
              "persistent_workers": spec.get("persistent_workers", False)}
    kwargs = dict(passed, generator=generator, worker_init_fn=init_fn)
    if spec.get("context"):
        kwargs["multiprocessing_context"] = passed["multiprocessing_context"] = spec["context"]
    if spec.get("odd_collate"):
        kwargs["collate_fn"] = OddCollate()
    if spec.get("prefetch_factor") is not None:
        kwargs["prefetch_factor"] = passed["prefetch_factor"] = spec["prefetch_factor"]
    if spec.get("positional"):
        args = [dataset] + [kwargs.pop(k) for k in ("batch_size", "shuffle")] + [None, None]
        args.append(kwargs.pop("num_workers"))
        return DataLoader(*args, **kwargs), passed
    return DataLoader(dataset, **kwargs), passed


def main():
    cfg = json.loads(sys.argv[1])
    facts = {"main_tid": threading.get_native_id(), "t_start": time.monotonic_ns(), "passed": [],
             "pin_tids": [], "torch": torch.__version__,
             "observer_loaded": "ingero_observer" in sys.modules}
    torch.manual_seed(0)
    data = torch.randn(cfg.get("samples", 48), 3)
    dataset = Rows(data, cfg.get("raise_at"))
    init_fn = functools.partial(worker_init, cfg["facts"] + ".workers")
    loaders = []
    for spec in cfg["loaders"]:
        loader, passed = make_loader(dataset, spec, init_fn)
        loaders.append((loader, spec))
        facts["passed"].append(passed)

    def save():
        facts["t_end"] = time.monotonic_ns()
        with open(cfg["facts"], "w") as f:
            json.dump(facts, f)

    try:
        for li, (loader, spec) in enumerate(loaders):
            for epoch in range(spec.get("epochs", 2)):
                it = iter(loader)
                pin = getattr(it, "_pin_memory_thread", None)
                facts["pin_tids"].append(None if pin is None else pin.native_id)
                for i, (x, idx) in enumerate(it):
                    print(li, epoch, i, "%.6f" % x.sum().item(), int(idx.sum()), flush=True)
                    if cfg.get("sleep_s"):
                        time.sleep(cfg["sleep_s"])
    finally:
        save()
    print("done", flush=True)


if __name__ == "__main__":
    main()

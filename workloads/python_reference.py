# SPDX-License-Identifier: Apache-2.0
"""The real PyTorch DataLoader (mode `python`) and the direct path (mode `python-direct`),
with the same configuration and result record as the LibTorch workloads (docs/formats.md).

Run by ingero-bench as:  python3 -c <this file> --config JSON --result PATH [--verify PATH]
With --ranks N (config "ranks" > 1) it is a DDP job: run as a file (python3 <this file> --config JSON
--result PATH), it starts N rank processes of itself with the environment torchrun gives its workers
(launch_ranks). Each rank trains on its DistributedSampler shard with its own DataLoader and writes
PATH.rank<R>; ingero-bench merges those records into one (docs/formats.md).
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

RESULT_VERSION = 1
MAX_BATCH_RECORDS = 10_000


class DeadlineExceeded(Exception):
    """An epoch ran past cfg["epoch_deadline_s"]: a sweep already knows this point is slower."""


def name_this_thread(name):
    """The name PyTorch >= 2.3 gives its workers (pt_data_worker), which the tracer's roles rely
    on; older PyTorch leaves them named python3."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


def record_worker_ready(path):
    """worker_init_fn: when this worker became ready for its first batch (its fork time is
    the trace's fork event). One line per worker start, appended (atomic for short writes)."""
    def ready(worker_id):
        name_this_thread("pt_data_worker")
        line = "%d %d %d\n" % (worker_id, os.getpid(), time.monotonic_ns())
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    return ready


def read_worker_starts(path):
    starts = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                worker_id, pid, ready = (int(x) for x in line.split())
                starts.append({"id": worker_id, "pid": pid, "ready_ns": ready})
    return starts


class IndexedRows(Dataset):
    """dataset[i] -> (row, i): only with --verify, so outputs can be matched to samples."""

    def __init__(self, data):
        self.data = data

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.data[i], i


def label(cfg):
    out = cfg["mode"]
    if cfg["mode"] == "python":
        out += " w%d" % cfg["num_workers"]
        if cfg["num_workers"] > 0:
            out += " pf%d" % (cfg["prefetch_factor"] or 2)
        if cfg["pin_memory"]:
            out += " pin"
        if cfg["persistent_workers"]:
            out += " persistent"
        if not cfg["shuffle"]:
            out += " noshuffle"
    if cfg.get("ranks", 1) > 1:
        out += " ranks%d" % cfg["ranks"]
    if cfg["train"]:
        out += " train"
    if cfg["cpus"]:
        out += " cpus%d" % cfg["cpus"]
    return out


def nearest_rank(sorted_values, q):
    if not sorted_values:
        return 0.0
    rank = max(1, -(-int(q * len(sorted_values) * 1_000_000) // 1_000_000))
    return sorted_values[min(len(sorted_values), rank) - 1]


def distribution(values):
    v = sorted(values)
    return {"total_s": sum(v), "p50_s": nearest_rank(v, 0.5), "p99_s": nearest_rank(v, 0.99),
            "max_s": v[-1] if v else 0.0}


def make_model(cfg):
    torch.manual_seed(cfg["seed"] + 1)
    f, h, c = cfg["features"], cfg["hidden"], cfg["classes"]
    return nn.Sequential(nn.Linear(f, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(), nn.Linear(h, c))


class Distributed:
    """This process's place in a torchrun job (RANK, LOCAL_RANK, WORLD_SIZE), or a single process."""

    def __init__(self, cfg):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.active = cfg.get("ranks", 1) > 1
        if self.active and self.world != cfg["ranks"]:
            raise SystemExit("python reference: --ranks %d but WORLD_SIZE is %d (launch with torchrun "
                             "--nproc_per_node %d)" % (cfg["ranks"], self.world, cfg["ranks"]))

    def init(self, device):
        if not self.active:
            return
        import torch.distributed as dist
        if device.type == "cuda":
            torch.cuda.set_device(device)
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")

    def device(self, cfg):
        use_cuda = cfg["device"] != "cpu" and torch.cuda.is_available()
        if not use_cuda:
            return torch.device("cpu")
        if self.active and self.local_rank >= torch.cuda.device_count():
            raise SystemExit("python reference: rank %d needs GPU %d but %d are visible (one GPU per rank)"
                             % (self.rank, self.local_rank, torch.cuda.device_count()))
        return torch.device("cuda", self.local_rank if self.active else torch.cuda.current_device())

    def wrap(self, model, device):
        if not self.active:
            return model
        from torch.nn.parallel import DistributedDataParallel
        return DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)

    def any_rank(self, flag, device):
        """Whether flag holds on any rank, decided by all ranks at the same step: a rank that stopped
        alone would leave the others failing in their next all-reduce."""
        if not self.active:
            return flag
        import torch.distributed as dist
        votes = torch.tensor([1 if flag else 0], device=device)
        dist.all_reduce(votes, op=dist.ReduceOp.MAX)
        return bool(votes.item())

    def result_path(self, path):
        return "%s.rank%d" % (path, self.rank) if self.active else path

    def close(self):
        if self.active:
            import torch.distributed as dist
            if dist.is_initialized():
                dist.destroy_process_group()


def launch_ranks(ranks):
    """torchrun --standalone --nproc_per_node N, as its local agent starts workers: one process
    per rank with RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR/PORT (a free local
    port) and OMP_NUM_THREADS=1 unless set. (Debian's torch 1.13 torchrun fails under Python 3.11.)
    When a rank fails the others are stopped; a signal is passed on to every rank."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(ranks),
               LOCAL_WORLD_SIZE=str(ranks), GROUP_RANK="0")
    env.setdefault("OMP_NUM_THREADS", "1")
    argv = [sys.executable, os.path.abspath(__file__)] + sys.argv[1:]
    procs = [subprocess.Popen(argv, env=dict(env, RANK=str(r), LOCAL_RANK=str(r))) for r in range(ranks)]

    def pass_on(signum, _frame):
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
    signal.signal(signal.SIGINT, pass_on)
    signal.signal(signal.SIGTERM, pass_on)
    code, stop_at = 0, None
    while any(p.poll() is None for p in procs):
        failed = [p.returncode for p in procs if p.returncode not in (None, 0)]
        if failed and stop_at is None:
            code = failed[0]
            pass_on(signal.SIGTERM, None)
            stop_at = time.monotonic() + 10
        if stop_at is not None and time.monotonic() > stop_at:
            for p in procs:
                if p.poll() is None:
                    p.kill()
        time.sleep(0.05)
    return code or next((p.returncode for p in procs if p.returncode), 0)


def epoch_batches(cfg, data, verify):
    """Yields (batch, indices or None) for one epoch."""
    n, b = cfg["samples"], cfg["batch_size"]
    if cfg["mode"] == "python-direct":
        stop = n - n % b if cfg["drop_last"] else n
        for i in range(0, stop, b):
            yield data[i:i + b], (torch.arange(i, min(i + b, n)) if verify else None)
        return
    yield from cfg["_loader_iter"]()


def write_atomically(path, text):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--result", required=True)
    ap.add_argument("--verify", help="write [index, output row] pairs of the last epoch here")
    args = ap.parse_args()
    cfg = json.loads(args.config)
    if cfg.get("ranks", 1) > 1 and "RANK" not in os.environ:
        return launch_ranks(cfg["ranks"])
    # SIGTERM and the signals that would otherwise lose the finished epochs (SIGHUP when the
    # terminal goes, SIGQUIT, SIGUSR1, SIGALRM) stop the run as Ctrl-C does.
    for stop in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGALRM):
        signal.signal(stop, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))

    if cfg["cpus"]:
        cpus = sorted(os.sched_getaffinity(0))[:cfg["cpus"]]
        os.sched_setaffinity(0, cpus)
        torch.set_num_threads(cfg["cpus"])
    if cfg["device"] == "cuda" and not torch.cuda.is_available():
        print("python reference: --device cuda but torch.cuda is not available", file=sys.stderr)
        return 2
    ddp = Distributed(cfg)
    device = ddp.device(cfg)
    cfg["device"] = device.type
    ddp.init(device)

    torch.manual_seed(cfg["seed"])
    data = torch.randn(cfg["samples"], cfg["features"])
    model = ddp.wrap(make_model(cfg).to(device), device)
    model.train(cfg["train"])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01) if cfg["train"] else None
    pin = cfg["pin_memory"] and device.type == "cuda"
    deadline = cfg.get("epoch_deadline_s", 0) or 0
    workers_path = ddp.result_path(os.path.join(os.path.dirname(os.path.abspath(args.result)), "workers"))
    sampler = None
    notes = [] if pin or not cfg["pin_memory"] else ["pin_memory has no effect without a CUDA device; ignored"]

    def make_loader():
        nonlocal sampler
        dataset = IndexedRows(data) if args.verify else data
        kwargs = dict(batch_size=cfg["batch_size"], shuffle=cfg["shuffle"], num_workers=cfg["num_workers"],
                      pin_memory=pin, drop_last=cfg["drop_last"])
        if ddp.active:
            from torch.utils.data.distributed import DistributedSampler
            sampler = DistributedSampler(dataset, num_replicas=ddp.world, rank=ddp.rank, shuffle=cfg["shuffle"],
                                         seed=cfg["seed"], drop_last=cfg["drop_last"])
            kwargs.update(shuffle=False, sampler=sampler)
        if cfg["num_workers"] > 0:
            kwargs["prefetch_factor"] = cfg["prefetch_factor"] or 2
            kwargs["persistent_workers"] = cfg["persistent_workers"]
            kwargs["worker_init_fn"] = record_worker_ready(workers_path)
        loader = DataLoader(dataset, **kwargs)

        def iterate():
            for item in loader:
                yield (item[0], item[1]) if args.verify else (item, None)
        return iterate

    result = {"schema": "ingero-bench/result", "version": RESULT_VERSION, "label": label(cfg), "status": "ok",
              "config": {k: v for k, v in cfg.items() if not k.startswith("_")}, "notes": notes,
              "pid": os.getpid(), "main_tid": threading.get_native_id()}
    if ddp.active:
        result.update({"rank": ddp.rank, "local_rank": ddp.local_rank, "world_size": ddp.world,
                       "backend": "nccl" if device.type == "cuda" else "gloo"})
    epoch_seconds, batches, truncated = [], [], False
    samples_per_epoch = h2d_per_epoch = 0
    checksum = 0.0
    verify_rows = []
    code = 0
    try:
        epoch = 0
        for rep in range(cfg["repeat"]):
            if cfg["mode"] == "python":
                cfg["_loader_iter"] = make_loader()
            n_epochs = cfg["epochs"] + (cfg["warmup_epochs"] if rep == 0 else 0)
            for e in range(n_epochs):
                measured = rep > 0 or e >= cfg["warmup_epochs"]
                h2d = samples = 0
                checksum = 0.0
                verify_rows = []
                if sampler is not None:
                    sampler.set_epoch(epoch)
                t0 = time.monotonic_ns()
                it = epoch_batches(cfg, data, args.verify)
                index = 0
                max_batches = cfg.get("max_batches", 0) or 0
                if max_batches and not measured and cfg.get("warmup_batches"):
                    max_batches = cfg["warmup_batches"]   # a bounded warm-up epoch: long enough to settle
                while True:
                    if max_batches and index >= max_batches:
                        break   # a bounded epoch: its first batches of the whole shuffled order
                    if deadline:
                        elapsed = (time.monotonic_ns() - t0) / 1e9
                        late = elapsed > deadline * (1 if measured else 2)
                        if ddp.any_rank(late, device):
                            raise DeadlineExceeded("an epoch ran past the deadline of %.3g s (%s after %.3g s)" % (
                                deadline, "stopped" if late else "another rank was late; stopped", elapsed))
                    w0 = time.monotonic_ns()
                    try:
                        x, idx = next(it)
                    except StopIteration:
                        break
                    w1 = time.monotonic_ns()
                    if x.device != device:
                        h2d += x.numel() * x.element_size()
                        x = x.to(device, non_blocking=x.is_pinned())
                    if cfg["train"]:
                        optimizer.zero_grad()
                        out = model(x)
                        target = (idx if idx is not None else torch.zeros(len(x), dtype=torch.long))
                        loss = nn.functional.cross_entropy(out, (target % cfg["classes"]).to(device))
                        loss.backward()
                        optimizer.step()
                        out = out.detach()
                    else:
                        with torch.no_grad():
                            out = model(x)
                    checksum += out.sum().item()
                    c1 = time.monotonic_ns()
                    samples += len(x)
                    if args.verify:
                        verify_rows.extend(zip(idx.tolist(), out.cpu().tolist()))
                    if measured:
                        if len(batches) < MAX_BATCH_RECORDS:
                            batches.append({"epoch": epoch, "index": index, "wait_start_ns": w0,
                                            "wait_ns": w1 - w0, "compute_ns": c1 - w1})
                        else:
                            truncated = True
                    index += 1
                t1 = time.monotonic_ns()
                if measured:
                    epoch_seconds.append((t1 - t0) / 1e9)
                    samples_per_epoch, h2d_per_epoch = samples, h2d
                epoch += 1
    except KeyboardInterrupt:
        result["status"], result["error"], code = "interrupted", "interrupted", 130
    except DeadlineExceeded as e:
        result["status"], result["error"] = "stopped", str(e)
    except Exception as e:  # a worker death surfaces here as RuntimeError
        result["status"], result["error"], code = "failed", str(e), 1
        print("python reference: %s" % e, file=sys.stderr)

    med = statistics.median(epoch_seconds) if epoch_seconds else 0.0
    waits = [b["wait_ns"] / 1e9 for b in batches]
    result.update({
        "epoch_seconds": epoch_seconds, "epoch_median_s": med,
        "epoch_min_s": min(epoch_seconds, default=0.0), "epoch_max_s": max(epoch_seconds, default=0.0),
        "samples_per_epoch": samples_per_epoch, "samples_per_s": samples_per_epoch / med if med else 0.0,
        "h2d_bytes_per_epoch": h2d_per_epoch, "h2d_bytes_once": 0,
        "h2d_gbps": h2d_per_epoch / med / 1e9 if med else 0.0,
        "wait": distribution(waits), "compute": distribution([b["compute_ns"] / 1e9 for b in batches]),
        "wait_fraction": sum(waits) / sum(epoch_seconds) if epoch_seconds else 0.0,
        "batches": batches, "batches_truncated": truncated, "checksum": checksum,
        "torch_version": torch.__version__,
        "workers": read_worker_starts(workers_path),
    })
    ddp.close()
    write_atomically(ddp.result_path(args.result), json.dumps(result))
    if args.verify:
        write_atomically(args.verify, json.dumps(verify_rows))
    return code


if __name__ == "__main__":
    sys.exit(main())

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
import array
import ctypes
import io
import json
import multiprocessing
import os
import signal
import socket
import stat
import statistics
import struct
import subprocess
import sys
import threading
import time
import zlib

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


# The on-disk datasets (--storage files|shards), written by ingero-bench-workload --prepare-dataset
# before this script starts (workloads/dataset_files.h holds the layout); this side only reads them.
RECORD = struct.Struct("<IIQII")  # magic, payload bytes, sample index, crc32 of the payload, reserved
RECORD_MAGIC = 0x31534249
IMAGE_MEAN = (0.485, 0.456, 0.406)
IMAGE_STD = (0.229, 0.224, 0.225)
M64 = (1 << 64) - 1


def mix64(z):
    """splitmix64's finaliser, as workloads/jpeg_samples.cc."""
    z = (z + 0x9e3779b97f4a7c15) & M64
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)


def flips(seed, epoch, index):
    return mix64(mix64(mix64(seed) ^ (epoch & M64)) ^ index) & 1 == 1


class DatasetError(Exception):
    """A stored sample failed its checks; the message names the file and the sample."""


def open_regular(path):
    """A descriptor of an existing regular file, never through a link at its last part, never a FIFO or a
    device (a FIFO would block the open, /dev/zero a read forever)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        raise DatasetError("%s cannot be opened: %s" % (path, e.strerror))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise DatasetError("%s is not a regular file" % path)
    return fd


def entry_file(entry_dir, name):
    """A manifest name inside the entry; one that could reach outside it (absolute, or with ..) is damage."""
    if not name or os.path.isabs(name) or ".." in name.split("/"):
        raise DatasetError("the dataset cache entry %s is damaged: its manifest names %s, outside the entry"
                           % (entry_dir, name))
    return os.path.join(entry_dir, name)


class StoredSamples(Dataset):
    """dataset[i] reads sample i's record (its own file, or its place in a shard with os.pread, which
    takes its own offset and so is safe in forked workers), checks magic, index, length and crc32, and
    decodes it: the raw float32 row, or the JPEG through PIL, then /255, per-channel mean/std and a
    horizontal flip seeded by (seed, epoch, sample)."""

    def __init__(self, entry_dir):
        with os.fdopen(open_regular(os.path.join(entry_dir, "manifest.json"))) as f:
            manifest = json.load(f)
        self.layout = manifest["layout"]
        self.files = [(entry_file(entry_dir, path), size) for path, size in manifest["files"]]
        self.samples, self.features = self.layout["samples"], self.layout["features"]
        self.shards = self.layout["storage"] == "shards"
        self.jpeg = self.layout["format"] == "jpeg"
        # The epoch a sample is read for, shared with forked workers (persistent ones too).
        self.epoch = multiprocessing.Value("i", 0, lock=False)
        if self.shards:
            self.per_shard = self.layout["shard_samples"]
            self.offsets = array.array("Q")
            with os.fdopen(open_regular(os.path.join(entry_dir, "index.bin")), "rb") as f:
                self.offsets.frombytes(f.read())
            if len(self.offsets) != self.samples:
                raise DatasetError("%s/index.bin holds %d offsets for %d samples" % (entry_dir, len(self.offsets),
                                                                                    self.samples))
            self.shard_fds = [open_regular(path) for path, _ in self.files[:-1]]

    def paths(self):
        return [path for path, _ in self.files]

    def __len__(self):
        return self.samples

    def _end(self, i):
        if (i + 1) % self.per_shard and i + 1 < self.samples:
            return self.offsets[i + 1]
        return self.files[i // self.per_shard][1]

    def _check(self, record, i, path):
        if len(record) < RECORD.size:
            raise DatasetError("sample %d in %s: truncated record (%d bytes)" % (i, path, len(record)))
        magic, length, index, crc, _ = RECORD.unpack_from(record)
        payload = record[RECORD.size:]
        if magic != RECORD_MAGIC:
            raise DatasetError("sample %d in %s: bad magic %#x (not a dataset record)" % (i, path, magic))
        if index != i:
            raise DatasetError("sample %d in %s: the record holds sample %d" % (i, path, index))
        if len(payload) != length:
            raise DatasetError("sample %d in %s: truncated record: %d payload bytes, the header says %d"
                               % (i, path, len(payload), length))
        if zlib.crc32(payload) != crc:
            raise DatasetError("sample %d in %s: crc32 mismatch (a corrupted byte)" % (i, path))
        return payload

    def _decode(self, payload, i):
        if not self.jpeg:
            return torch.frombuffer(bytearray(payload), dtype=torch.float32)
        from PIL import Image
        size = self.layout["image_size"]
        image = Image.open(io.BytesIO(payload))
        image.load()
        if image.size != (size, size) or image.mode != "RGB":
            raise DatasetError("sample %d: a %s %dx%d image, the dataset's are RGB %dx%d" % (
                i, image.mode, image.size[0], image.size[1], size, size))
        x = torch.frombuffer(bytearray(image.tobytes()), dtype=torch.uint8).view(size, size, 3).permute(2, 0, 1)
        x = x.float() / 255.0
        x = (x - torch.tensor(IMAGE_MEAN).view(3, 1, 1)) / torch.tensor(IMAGE_STD).view(3, 1, 1)
        if flips(self.layout["seed"], self.epoch.value, i):
            x = x.flip(2)
        return x.reshape(-1)

    def _read_file(self, i):
        path, size = self.files[i]
        fd = open_regular(path)
        try:
            record = os.pread(fd, size, 0)
        finally:
            os.close(fd)
        return self._check(record, i, path)

    def _read_shard_run(self, start, count):
        """Samples [start, start + count) of one shard: one pread."""
        shard = start // self.per_shard
        path = self.files[shard][0]
        begin, end = self.offsets[start], self._end(start + count - 1)
        data = os.pread(self.shard_fds[shard], end - begin, begin)
        if len(data) != end - begin:
            raise DatasetError("sample %d in %s: truncated file (%d of %d bytes from offset %d)"
                               % (start, path, len(data), end - begin, begin))
        view = memoryview(data)
        return [self._check(view[self.offsets[i] - begin:self._end(i) - begin], i, path)
                for i in range(start, start + count)]

    def __getitem__(self, i):
        payload = self._read_shard_run(i, 1)[0] if self.shards else self._read_file(i)
        return self._decode(payload, i)

    def read_range(self, start, stop):
        """Rows [start, stop) in order: for shards one pread per shard touched, else the files in order."""
        rows, i = [], start
        while i < stop:
            if self.shards:
                count = min(stop - i, (i // self.per_shard + 1) * self.per_shard - i)
                rows.extend(self._decode(p, i + k) for k, p in enumerate(self._read_shard_run(i, count)))
            else:
                count = 1
                rows.append(self._decode(self._read_file(i), i))
            i += count
        return torch.stack(rows)


def libc_calls():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return libc


def page_residency(paths):
    """(resident pages, total pages) of the files, from mincore over a read-only mapping of each."""
    libc, page = libc_calls(), os.sysconf("SC_PAGE_SIZE")
    resident = total = 0
    for path in paths:
        fd = open_regular(path)
        try:
            size = os.fstat(fd).st_size
            if size == 0:
                continue
            pages = (size + page - 1) // page
            addr = libc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
            if addr is None or addr == ctypes.c_void_p(-1).value:
                raise OSError(ctypes.get_errno(), "mmap of %s failed" % path)
            try:
                vec = ctypes.create_string_buffer(pages)
                if libc.mincore(addr, size, vec) != 0:
                    raise OSError(ctypes.get_errno(), "mincore of %s failed" % path)
                resident += sum(b & 1 for b in vec.raw[:pages])
            finally:
                libc.munmap(addr, size)
            total += pages
        finally:
            os.close(fd)
    return resident, total


def settle_page_cache(cfg, paths, first_measured):
    """Before a measured epoch: cold evicts the dataset's pages, warm reads them all once (before the
    first); returns the residency then."""
    for path in paths:
        if cfg["page_cache"] != "cold" and not first_measured:
            break
        fd = open_regular(path)
        try:
            if cfg["page_cache"] == "cold":
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            else:
                while os.read(fd, 1 << 20):
                    pass
        finally:
            os.close(fd)
    return page_residency(paths)


def cold_not_held_notes(residency, cfg):
    """As the C++ workload says it: an eviction that left more than half the pages resident (tmpfs and
    ramfs keep files only in memory) did not make the page cache cold."""
    for r in residency:
        if r["total_pages"] and r["resident_pages"] * 2 > r["total_pages"]:
            return ["--page-cache cold: %d of %d pages stayed resident after eviction; the page cache could not be "
                    "made cold there, and the epochs read from memory (put --dataset-cache on a disk for cold reads)"
                    % (r["resident_pages"], r["total_pages"])]
    return []


def storage_record(cfg, prepared, stored, epochs):
    record = {"storage": cfg["storage"], "format": cfg["format"], "page_cache": cfg["page_cache"],
              "dir": prepared["dir"], "key": prepared["key"], "files": len(stored.files),
              "bytes": sum(size for _, size in stored.files), "written_now": prepared["written_now"],
              "write_s": prepared["write_s"], "device": prepared["device"], "page_size": os.sysconf("SC_PAGE_SIZE"),
              "epochs": epochs}
    if cfg["format"] == "jpeg":
        record["image_size"] = cfg["image_size"]
    return record


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
    if cfg.get("storage", "memory") != "memory":
        out += " " + cfg["storage"]
        if cfg.get("format") == "jpeg":
            out += " jpeg%d" % cfg["image_size"]
        if cfg.get("page_cache") == "cold":
            out += " cold"
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
            rows = data.read_range(i, min(i + b, n)) if isinstance(data, StoredSamples) else data[i:i + b]
            yield rows, (torch.arange(i, min(i + b, n)) if verify else None)
        return
    yield from cfg["_loader_iter"]()


def write_atomically(path, text):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--result", required=True)
    ap.add_argument("--verify", help="write [index, output row] pairs of the last epoch here")
    return ap.parse_args()


def stop_on_signals():
    """SIGTERM and the signals that would otherwise lose the finished epochs (SIGHUP when the
    terminal goes, SIGQUIT, SIGUSR1, SIGALRM) stop the run as Ctrl-C does."""
    for stop in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGALRM):
        signal.signal(stop, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))


def pin_cpus(cfg):
    if cfg["cpus"]:
        cpus = sorted(os.sched_getaffinity(0))[:cfg["cpus"]]
        os.sched_setaffinity(0, cpus)
        torch.set_num_threads(cfg["cpus"])


def load_dataset(cfg, run_dir):
    """(data, stored samples or None, the preparation report or None)."""
    if cfg.get("storage", "memory") == "memory":
        torch.manual_seed(cfg["seed"])
        return torch.randn(cfg["samples"], cfg["features"]), None, None
    # ingero-bench prepared the dataset before starting this script; its report lies beside the result.
    with open(os.path.join(run_dir, "dataset-prepare.json")) as f:
        prepared = json.load(f)
    stored = StoredSamples(prepared["dir"])
    return stored, stored, prepared


class Loaders:
    """A fresh DataLoader per repeat, as configured; its DistributedSampler (DDP) is kept for set_epoch."""

    def __init__(self, cfg, data, verify, ddp, pin, workers_path):
        self.cfg, self.data, self.verify, self.ddp, self.pin, self.workers_path = cfg, data, verify, ddp, pin, workers_path
        self.sampler = None

    def __call__(self):
        cfg = self.cfg
        dataset = IndexedRows(self.data) if self.verify else self.data
        kwargs = dict(batch_size=cfg["batch_size"], shuffle=cfg["shuffle"], num_workers=cfg["num_workers"],
                      pin_memory=self.pin, drop_last=cfg["drop_last"])
        if self.ddp.active:
            from torch.utils.data.distributed import DistributedSampler
            self.sampler = DistributedSampler(dataset, num_replicas=self.ddp.world, rank=self.ddp.rank,
                                              shuffle=cfg["shuffle"], seed=cfg["seed"], drop_last=cfg["drop_last"])
            kwargs.update(shuffle=False, sampler=self.sampler)
        if cfg["num_workers"] > 0:
            kwargs["prefetch_factor"] = cfg["prefetch_factor"] or 2
            kwargs["persistent_workers"] = cfg["persistent_workers"]
            kwargs["worker_init_fn"] = record_worker_ready(self.workers_path)
        loader = DataLoader(dataset, **kwargs)
        verify = self.verify

        def iterate():
            for item in loader:
                yield (item[0], item[1]) if verify else (item, None)
        return iterate


class Job:
    """Everything the epochs need: the configuration, the device, the data, the model and its loaders."""

    def __init__(self, cfg, args, ddp, device, data, stored, residency):
        self.cfg, self.args, self.ddp, self.device, self.data, self.stored = cfg, args, ddp, device, data, stored
        self.residency = residency
        self.model = ddp.wrap(make_model(cfg).to(device), device)
        self.model.train(cfg["train"])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01) if cfg["train"] else None
        self.pin = cfg["pin_memory"] and device.type == "cuda"
        self.deadline = cfg.get("epoch_deadline_s", 0) or 0
        self.workers_path = ddp.result_path(os.path.join(os.path.dirname(os.path.abspath(args.result)), "workers"))
        self.loaders = Loaders(cfg, data, args.verify, ddp, self.pin, self.workers_path)


class Measured:
    """What the epochs produced so far; kept as it is when an epoch stops midway."""

    def __init__(self):
        self.epoch_seconds, self.batches, self.truncated = [], [], False
        self.samples_per_epoch = self.h2d_per_epoch = 0
        self.checksum = 0.0
        self.verify_rows = []


def compute(job, x, idx):
    """One batch through the model: trained (forward, backward, SGD step) or inferred under no-grad."""
    cfg, device = job.cfg, job.device
    if cfg["train"]:
        job.optimizer.zero_grad()
        out = job.model(x)
        target = (idx if idx is not None else torch.zeros(len(x), dtype=torch.long))
        loss = nn.functional.cross_entropy(out, (target % cfg["classes"]).to(device))
        loss.backward()
        job.optimizer.step()
        return out.detach()
    with torch.no_grad():
        return job.model(x)


def check_deadline(job, t0, measured):
    if not job.deadline:
        return
    elapsed = (time.monotonic_ns() - t0) / 1e9
    late = elapsed > job.deadline * (1 if measured else 2)
    if job.ddp.any_rank(late, job.device):
        raise DeadlineExceeded("an epoch ran past the deadline of %.3g s (%s after %.3g s)" % (
            job.deadline, "stopped" if late else "another rank was late; stopped", elapsed))


def run_epoch(job, epoch, measured, m):
    cfg, stored = job.cfg, job.stored
    h2d = samples = 0
    m.checksum = 0.0
    m.verify_rows = []
    if job.loaders.sampler is not None:
        job.loaders.sampler.set_epoch(epoch)
    if stored is not None:
        stored.epoch.value = epoch
        if measured:
            # Outside the epoch's time, as the C++ modes do.
            resident, total = settle_page_cache(cfg, stored.paths(), not job.residency)
            job.residency.append({"epoch": epoch, "resident_pages": resident, "total_pages": total})
    t0 = time.monotonic_ns()
    it = epoch_batches(cfg, job.data, job.args.verify)
    index = 0
    max_batches = cfg.get("max_batches", 0) or 0
    if max_batches and not measured and cfg.get("warmup_batches"):
        max_batches = cfg["warmup_batches"]   # a bounded warm-up epoch: long enough to settle
    while True:
        if max_batches and index >= max_batches:
            break   # a bounded epoch: its first batches of the whole shuffled order
        check_deadline(job, t0, measured)
        w0 = time.monotonic_ns()
        try:
            x, idx = next(it)
        except StopIteration:
            break
        w1 = time.monotonic_ns()
        if x.device != job.device:
            h2d += x.numel() * x.element_size()
            x = x.to(job.device, non_blocking=x.is_pinned())
        out = compute(job, x, idx)
        m.checksum += out.sum().item()
        c1 = time.monotonic_ns()
        samples += len(x)
        if job.args.verify:
            m.verify_rows.extend(zip(idx.tolist(), out.cpu().tolist()))
        if measured:
            if len(m.batches) < MAX_BATCH_RECORDS:
                m.batches.append({"epoch": epoch, "index": index, "wait_start_ns": w0,
                                  "wait_ns": w1 - w0, "compute_ns": c1 - w1})
            else:
                m.truncated = True
        index += 1
    t1 = time.monotonic_ns()
    if measured:
        m.epoch_seconds.append((t1 - t0) / 1e9)
        m.samples_per_epoch, m.h2d_per_epoch = samples, h2d


def run_epochs(job, m):
    """Every repeat's epochs (the warm-up ones first); returns (status, error, exit code)."""
    cfg = job.cfg
    try:
        epoch = 0
        for rep in range(cfg["repeat"]):
            if cfg["mode"] == "python":
                cfg["_loader_iter"] = job.loaders()
            n_epochs = cfg["epochs"] + (cfg["warmup_epochs"] if rep == 0 else 0)
            for e in range(n_epochs):
                run_epoch(job, epoch, rep > 0 or e >= cfg["warmup_epochs"], m)
                epoch += 1
    except KeyboardInterrupt:
        return "interrupted", "interrupted", 130
    except DeadlineExceeded as e:
        return "stopped", str(e), 0
    except Exception as e:  # a worker death surfaces here as RuntimeError
        print("python reference: %s" % e, file=sys.stderr)
        return "failed", one_line_error(e), 1
    return "ok", None, 0


def one_line_error(e):
    """The run's stored error on one line. A DataLoader worker's exception reaches the main process as
    "Caught X in DataLoader worker process N." and the worker's traceback, whose last line is the
    worker's own message (the file and the sample of a damaged dataset): those two lines are kept."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    if not lines:
        return type(e).__name__
    return lines[0] if len(lines) == 1 else "%s %s" % (lines[0], lines[-1])


def result_record(job, notes):
    cfg, ddp = job.cfg, job.ddp
    result = {"schema": "ingero-bench/result", "version": RESULT_VERSION, "label": label(cfg), "status": "ok",
              "config": {k: v for k, v in cfg.items() if not k.startswith("_")}, "notes": notes,
              "pid": os.getpid(), "main_tid": threading.get_native_id()}
    if ddp.active:
        result.update({"rank": ddp.rank, "local_rank": ddp.local_rank, "world_size": ddp.world,
                       "backend": "nccl" if job.device.type == "cuda" else "gloo"})
    return result


def add_measurements(result, m, workers_path):
    med = statistics.median(m.epoch_seconds) if m.epoch_seconds else 0.0
    waits = [b["wait_ns"] / 1e9 for b in m.batches]
    result.update({
        "epoch_seconds": m.epoch_seconds, "epoch_median_s": med,
        "epoch_min_s": min(m.epoch_seconds, default=0.0), "epoch_max_s": max(m.epoch_seconds, default=0.0),
        "samples_per_epoch": m.samples_per_epoch, "samples_per_s": m.samples_per_epoch / med if med else 0.0,
        "h2d_bytes_per_epoch": m.h2d_per_epoch, "h2d_bytes_once": 0,
        "h2d_gbps": m.h2d_per_epoch / med / 1e9 if med else 0.0,
        "wait": distribution(waits), "compute": distribution([b["compute_ns"] / 1e9 for b in m.batches]),
        "wait_fraction": sum(waits) / sum(m.epoch_seconds) if m.epoch_seconds else 0.0,
        "batches": m.batches, "batches_truncated": m.truncated, "checksum": m.checksum,
        "torch_version": torch.__version__,
        "workers": read_worker_starts(workers_path),
    })


def main():
    args = parse_args()
    cfg = json.loads(args.config)
    if cfg.get("ranks", 1) > 1 and "RANK" not in os.environ:
        return launch_ranks(cfg["ranks"])
    stop_on_signals()
    pin_cpus(cfg)
    if cfg["device"] == "cuda" and not torch.cuda.is_available():
        print("python reference: --device cuda but torch.cuda is not available", file=sys.stderr)
        return 2
    ddp = Distributed(cfg)
    device = ddp.device(cfg)
    cfg["device"] = device.type
    ddp.init(device)

    data, stored, prepared = load_dataset(cfg, os.path.dirname(os.path.abspath(args.result)))
    residency = []
    job = Job(cfg, args, ddp, device, data, stored, residency)
    notes = [] if job.pin or not cfg["pin_memory"] else ["pin_memory has no effect without a CUDA device; ignored"]
    result = result_record(job, notes)
    if stored is not None:
        result["storage"] = storage_record(cfg, prepared, stored, residency)
    m = Measured()
    status, error, code = run_epochs(job, m)
    if cfg.get("page_cache") == "cold":
        for note in cold_not_held_notes(residency, cfg):
            notes.append(note)
            print("note: " + note, file=sys.stderr)  # as the C++ workload prints its notes
    if status != "ok":
        result["status"], result["error"] = status, error
    add_measurements(result, m, job.workers_path)
    ddp.close()
    write_atomically(ddp.result_path(args.result), json.dumps(result))
    if args.verify:
        write_atomically(args.verify, json.dumps(m.verify_rows))
    return code


if __name__ == "__main__":
    sys.exit(main())

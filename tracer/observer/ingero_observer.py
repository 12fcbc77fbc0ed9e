# SPDX-License-Identifier: Apache-2.0
"""ingero-bench's DataLoader observer for the user's own Python jobs.

`ingero-bench trace -- python3 train.py` puts this directory first on the job's PYTHONPATH and sets
INGERO_OBSERVER_DIR; sitecustomize.py (beside this file) calls install() at start-up in every
interpreter of the job. install() imports nothing heavy and never imports torch: it adds a
sys.meta_path finder that patches torch.utils.data.dataloader (and the worker loop in
torch.utils.data._utils.worker) only when the job itself imports it. Every patch calls the original
with the original arguments and returns or raises exactly what it did; an error of the observer is
counted and reported in its file, never raised into the job.

Environment
  INGERO_OBSERVER_DIR        where the files go: a folder that exists, is this user's (euid), has mode
                             0700 and is not a link; never created. Unset: the observer is inert
  INGERO_OBSERVER=0          inert even with INGERO_OBSERVER_DIR set
  INGERO_OBSERVER_OVERRIDES  JSON object of DataLoader arguments to replace (below)

Output: one JSON-lines file per process, $INGERO_OBSERVER_DIR/observer-<pid>.jsonl (if that name is
taken, by a pid reused within one run, observer-<pid>.<n>.jsonl), created on the first record: a
process that never constructs a DataLoader and is not a DataLoader worker writes nothing. Every line
is one JSON object written by one write() call; only the last line of a killed process can be
incomplete, and a reader skips a malformed last line. A file belongs to one process; a child made
by os.fork starts its own file and never repeats its parent's records. Times are
time.monotonic_ns(): CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns. pid is os.getpid(), tid a
kernel thread id (threading.get_native_id()). Lines, in the order written:

  {"type":"process","pid":P,"parent_pid":PP,"main_tid":T,"python":"3.11.2","torch":"1.13.1"|null,
   "argv":[...],"observer_version":1}
      first line of every file. main_tid: the process's main thread (after a fork: the forking thread).
  {"type":"loader","pid":P,"loader":L,"class":"torch.utils.data.dataloader.DataLoader","ts_ns":N,
   "knobs":{...}|null,"overrides_applied":{...},"overrides_original":{...},
   "overrides_not_applicable":{...},"override_error":null|"...","init_error":null|"..."}
      one per DataLoader, at construction (in a forked child: again, before the child's first record
      of that loader). L: the loader's construction index in this process, from 0 (a forked child
      keeps its parent's numbering). knobs, as the constructed DataLoader holds them: num_workers,
      prefetch_factor, pin_memory, persistent_workers, batch_size, drop_last, timeout, sampler and
      batch_sampler (class names; batch_sampler null without one), collate_fn and worker_init_fn
      (qualified names, or null), dataset (qualified class name), multiprocessing_context (start
      method name, or null), pin_memory_device, sharing_strategy (torch.multiprocessing's: file_descriptor
      or file_system), and in_order where torch has it (>= 2.6); a knob
      that cannot be read is null (and counted in summary.errors). knobs is null and init_error says why when DataLoader.__init__ raised (the job got that
      exception unchanged). The overrides fields are described below.
  {"type":"epoch","pid":P,"loader":L,"epoch":E,"start_ns":N,"workers":[pids],"pin_tid":T|null,
   "reused":false,"batches":N|null}
      an iterator created (DataLoader._get_iterator) or, with persistent workers, reset (reused:
      true). E counts the loader's epochs from 0. start_ns: when creating/resetting began (worker
      start-up lies between it and the first batch). workers: the worker processes' pids ([] with
      num_workers=0); pin_tid: the pin-memory thread. batches: len(loader), the batches the epoch
      will take (a map-style dataset's index sampler length), or null where unknown. L is -1 for an iterator not made by
      DataLoader._get_iterator (a subclass building its own) or of a loader the observer could not
      record; it has no loader line, and E counts such iterators.
  {"type":"stack","pid":P,"id":S,"frames":[[qualname,file,line],...]}
      a stack of Python frames that asked for batches, innermost first (the caller of next(), the
      observer's and torch.utils.data's own frames skipped; line: the line executing), at most 16
      frames; written once per process before the first row that names it. S counts from 0.
  {"type":"batches","pid":P,"loader":L,"epoch":E,"tid":T,"rows":[[index,wait_start_ns,wait_ns,S,bytes],...]}
      the next() calls on that epoch's iterator from thread T that returned a batch: index within
      the epoch from 0, the call's start and its duration, the id of its caller's stack line
      (null past 4096 distinct stacks), and the bytes of the batch's tensors (null when it holds
      none: _batch_bytes). Rows are buffered and written when a
      record comes 0.5 s or more after the last write or 512 rows wait, at an epoch's end, before
      any other line, and at exit; a job that stops calling next() keeps its last rows until it
      exits. A process keeps at most 1,000,000 rows; later ones are counted in summary.dropped.
  {"type":"epoch_end","pid":P,"loader":L,"epoch":E,"ts_ns":N}
      next() raised StopIteration (once per epoch). An epoch the job left early has none.
  {"type":"worker_ready","pid":P,"worker_id":W,"ready_ns":N,"parent_pid":PP}
      in a DataLoader worker's own file: when the worker's worker_init_fn returned (at the worker
      loop's entry when there is none). PP: the process that made the worker.
  {"type":"summary","pid":P,"ts_ns":N,"batches":N,"dropped":N,"errors":N,"error_sample":null|"...",
   "override_error":null|"..."}
      at exit (a worker: when its loop returns), if the file exists or an error happened. batches:
      rows written; errors: the observer's own errors, error_sample the first of them. None after
      SIGKILL, SIGTERM without a handler, or os._exit, nor from workers the job's exit terminates
      (persistent workers: multiprocessing terminates daemonic children at exit).

Overrides: INGERO_OBSERVER_OVERRIDES = {"num_workers": 8, "persistent_workers": true,
"prefetch_factor": 4, "pin_memory": false, "loader": 0} replaces those DataLoader arguments, passed by
keyword, by position or not at all, for the loader whose index is "loader" (every loader without
it). Accepted: num_workers, prefetch_factor, pin_memory, persistent_workers, timeout,
pin_memory_device, in_order, multiprocessing_context (a start method name or null): the knobs of how
batches are loaded, not of which batches. overrides_applied: {argument: value passed};
overrides_original: {argument: what the job passed, or the default it left}. An override PyTorch
would refuse without workers (prefetch_factor, persistent_workers, multiprocessing_context, timeout >
0 with num_workers=0) is not passed: overrides_not_applicable gives {argument: reason}, as for an
argument this torch's DataLoader lacks (in_order before 2.6). When an override takes every worker
away, the job's own values of those arguments are returned to their defaults (listed in
overrides_applied). A value that is not a JSON object, an unknown key or a wrong type sets
override_error on every loader line and the summary, and nothing is overridden.
"""
import _thread
import itertools
import os
import sys
import time

OBSERVER_VERSION = 1
FLUSH_ROWS = 512
FLUSH_NS = 500_000_000
MAX_ROWS = 1_000_000
STACK_DEPTH = 16       # frames kept of a batch's caller stack
MAX_STACKS = 4096      # distinct caller stacks a process names; later batches name none
_ITER_ATTR = "_ingero_observer_epoch"   # our per-iterator state, set on PyTorch's iterator objects
_MARK = "_ingero_observer_patched"       # on every wrapper, so a reloaded module is patched once
_DATALOADER = "torch.utils.data.dataloader"
_WORKER = "torch.utils.data._utils.worker"
_WORKER_LOOPS = ("_worker_loop", "_process_worker_loop")   # the process target, by torch version

# Override keys and the JSON types each accepts (bool is excluded where an int is wanted).
_OVERRIDE_TYPES = {
    "num_workers": "count", "prefetch_factor": "positive", "pin_memory": "bool",
    "persistent_workers": "bool", "timeout": "seconds", "pin_memory_device": "str",
    "in_order": "bool", "multiprocessing_context": "start_method",
}
# Arguments PyTorch refuses (or its single-process iterator asserts on) without workers:
# name -> whether a value needs workers, given the argument's default.
_NEEDS_WORKERS = {
    "prefetch_factor": lambda value, default: value != default,
    "persistent_workers": lambda value, default: bool(value),
    "multiprocessing_context": lambda value, default: value is not None,
    "timeout": lambda value, default: value != 0,
}

_observer = None  # the process's _Observer once install() ran


def install(out_dir, overrides_text=None):
    """Starts observing this interpreter (idempotent); called by sitecustomize at start-up."""
    global _observer
    if _observer is not None:
        return _observer
    _observer = _Observer(out_dir, overrides_text)
    sys.meta_path.insert(0, _PatchingFinder({_DATALOADER: _patch_torch}))
    if _DATALOADER in sys.modules:  # installed late (not from sitecustomize): patch what is there
        _patch_torch(sys.modules[_DATALOADER])
    import atexit
    # Registered this early, it runs after the job's own atexit handlers (LIFO): it sees every batch.
    atexit.register(_observer.finish)
    os.register_at_fork(after_in_child=_observer.after_fork_in_child)
    return _observer


# ---------------------------------------------------------------------------------------------
# The import hook: wraps the real loader of the modules we patch, nothing else.

class _PatchingFinder:
    """A meta-path finder that lets the other finders find `name`, then patches the module right
    after the real loader has executed it."""

    def __init__(self, patches):
        self._patches = patches
        self._busy = set()

    def find_spec(self, fullname, path=None, target=None):
        patch = self._patches.get(fullname)
        if patch is None or fullname in self._busy:
            return None
        self._busy.add(fullname)
        try:
            spec = _find_spec_after(self, fullname, path, target)
        finally:
            self._busy.discard(fullname)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _PatchingLoader(spec.loader, patch)
        return spec


def _find_spec_after(finder, fullname, path, target):
    for other in list(sys.meta_path):
        if other is finder:
            continue
        find = getattr(other, "find_spec", None)
        if find is None:
            continue
        spec = find(fullname, path, target)
        if spec is not None:
            return spec
    return None


class _PatchingLoader:
    """Runs the real loader, puts it back on the module (so the module looks as if loaded without
    us), then patches. An error of the real loader is the import's error; ours is only counted."""

    def __init__(self, real, patch):
        self._real = real
        self._patch = patch

    def create_module(self, spec):
        create = getattr(self._real, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module):
        try:
            self._real.exec_module(module)
        finally:
            module.__loader__ = self._real
            if getattr(module, "__spec__", None) is not None:
                module.__spec__.loader = self._real
        try:
            self._patch(module)
        except Exception as e:  # noqa: BLE001 -- never into the job
            _observer.fail("patch " + module.__name__, e)

    def __getattr__(self, name):  # get_source, is_package, ... as the real loader answers them
        return getattr(self._real, name)


# ---------------------------------------------------------------------------------------------
# The patches (applied to the classes and module in place, so every reference sees them).

def _patch_torch(dataloader):
    import functools
    obs = _observer
    try:
        _keep_source_for_tracebacks()
    except Exception as e:  # noqa: BLE001
        obs.fail("keep source", e)
    patches = (
        (dataloader.DataLoader, "__init__", _wrap_loader_init),
        (dataloader.DataLoader, "_get_iterator", _wrap_get_iterator),
        (dataloader._BaseDataLoaderIter, "__next__", _wrap_next),
        (dataloader._MultiProcessingDataLoaderIter, "_reset", _wrap_reset),
    )
    for owner, name, wrap in patches:
        try:
            original = owner.__dict__[name]
            if not getattr(original, _MARK, False):
                wrapper = functools.wraps(original)(wrap(obs, original))
                setattr(wrapper, _MARK, True)
                setattr(owner, name, wrapper)
        except Exception as e:  # noqa: BLE001
            obs.fail("patch %s.%s" % (getattr(owner, "__name__", owner), name), e)
    try:
        _patch_worker_loops(obs, sys.modules.get(_WORKER), functools)
    except Exception as e:  # noqa: BLE001
        obs.fail("patch worker loop", e)


def _keep_source_for_tracebacks():
    """Our lines in linecache under the name our code carries (sitecustomize names it in place of this
    file's path, which the harness removes after the run), so that a traceback the traceback module
    formats (logging, traceback.print_exc, a DataLoader worker's error) still shows an observer
    frame's line once the file is gone. torch has imported linecache by now."""
    name = _keep_source_for_tracebacks.__code__.co_filename
    linecache = sys.modules.get("linecache")
    if linecache is None or not (name.startswith("<") and name.endswith(">")) or name in linecache.cache:
        return
    with open(__file__) as f:
        lines = f.readlines()
    # No modification time: linecache.checkcache keeps the entry (as for a module's own loader).
    linecache.cache[name] = (sum(len(line) for line in lines), None, lines, name)


def _patch_worker_loops(obs, worker, functools):
    """One wrapper per distinct loop function, set on every name that held it. Pickling by
    reference (spawn, forkserver) looks the target up by __module__ and __qualname__, which
    functools.wraps keeps: that attribute must be the wrapper too, or pickle refuses it."""
    if worker is None:
        return
    wrappers = {}
    for name in _WORKER_LOOPS:
        original = getattr(worker, name, None)
        if not callable(original) or getattr(original, _MARK, False):
            continue
        wrapper = wrappers.get(id(original))
        if wrapper is None:
            wrapper = functools.wraps(original)(_wrap_worker_loop(obs, original))
            setattr(wrapper, _MARK, True)
            wrappers[id(original)] = wrapper
        setattr(worker, name, wrapper)
    for wrapper in wrappers.values():
        if getattr(worker, wrapper.__qualname__, None) is wrapper.__wrapped__:
            setattr(worker, wrapper.__qualname__, wrapper)


def _wrap_loader_init(obs, original):
    import inspect
    signature = inspect.signature(original)

    def __init__(self, *args, **kwargs):
        plan = obs.loader_begin(self, signature, args, kwargs)
        call_args, call_kwargs = (args, kwargs) if plan.args is None else (plan.args, plan.kwargs)
        try:
            result = original(self, *call_args, **call_kwargs)
        except BaseException as e:
            obs.loader_end(self, plan, e)
            raise
        obs.loader_end(self, plan, None)
        return result
    return __init__


def _wrap_get_iterator(obs, original):
    now = time.monotonic_ns

    def _get_iterator(self):
        start = now()
        iterator = original(self)
        obs.epoch_start(iterator, self, start)
        return iterator
    return _get_iterator


def _wrap_reset(obs, original):
    now = time.monotonic_ns

    def _reset(self, loader, *args, **kwargs):
        # Inside the iterator's own __init__ (first_iter) it has no state yet: not a new epoch here.
        epoch = getattr(self, _ITER_ATTR, None)
        start = now()
        result = original(self, loader, *args, **kwargs)
        if epoch is not None:
            obs.epoch_restart(self, epoch, loader, start)
        return result
    return _reset


_SKIPPED = []


def _skipped_files():
    """The file prefixes of frames that are not the user's: this module's code (named as
    sitecustomize loaded it), torch.utils.data."""
    if not _SKIPPED:
        data = sys.modules.get("torch.utils.data")
        folder = os.path.dirname(getattr(data, "__file__", "") or "")
        _SKIPPED.append((sys._getframe(0).f_code.co_filename,) + ((folder + os.sep,) if folder else ()))
    return _SKIPPED[0]


def _wrap_next(obs, original):
    now = time.monotonic_ns

    def __next__(self):
        epoch = getattr(self, _ITER_ATTR, None)
        if epoch is None:
            epoch = obs.adopt(self)
        start = now()
        try:
            data = original(self)
        except StopIteration:
            obs.epoch_end(epoch, now())
            raise
        obs.batch(epoch, start, now(), data)
        return data
    return __next__


def _batch_bytes(data, depth=0):
    """The bytes a batch's tensors hold (torch tensors, numpy arrays; in tuples, lists and dicts),
    what a worker puts in shared memory for it; None when it holds none. The walk is bounded: 4
    levels, the first 64 items of a collection (the rest counted as their mean)."""
    kind = type(data)
    if hasattr(kind, "element_size") and hasattr(kind, "numel"):  # a torch.Tensor, by duck type
        return data.element_size() * data.numel()
    if depth >= 4 or not isinstance(data, (tuple, list, dict)):
        nbytes = getattr(data, "nbytes", None) if hasattr(kind, "nbytes") else None  # numpy
        return nbytes if type(nbytes) is int else None
    items = data.values() if isinstance(data, dict) else data
    sizes = [_batch_bytes(item, depth + 1) for item in itertools.islice(items, 64)]
    known = [n for n in sizes if n is not None]
    if not known:
        return None
    return sum(known) * len(items) // len(sizes)


def _wrap_worker_loop(obs, original):
    import inspect
    signature = inspect.signature(original)

    def worker_loop(*args, **kwargs):
        call_args, call_kwargs, in_worker = args, kwargs, False
        try:
            call_args, call_kwargs, in_worker = obs.worker_begin(signature, args, kwargs)
        except Exception as e:  # noqa: BLE001
            obs.fail("worker loop", e)
        try:
            return original(*call_args, **call_kwargs)
        finally:
            if in_worker:   # a worker process ends by os._exit: atexit never runs there
                obs.finish()
    return worker_loop


# ---------------------------------------------------------------------------------------------
def _batches_per_epoch(iterator):
    """len(loader) as the iterator sees it (its index sampler's length), for a map-style dataset;
    None where unknown. An iterable dataset is left alone: asking its length changes what its
    DataLoader warns about later."""
    if getattr(iterator, "_dataset_kind", None) != 0:  # torch's _DatasetKind.Map
        return None
    try:
        n = len(iterator._index_sampler)
    except Exception:  # noqa: BLE001 - a sampler without a length
        return None
    return n if isinstance(n, int) else None


# Per-loader and per-epoch state.

class _Loader:
    __slots__ = ("index", "epochs", "line")

    def __init__(self, index, line):
        self.index = index
        self.epochs = 0
        self.line = line   # its loader line, which a forked child writes again into its own file


class _Epoch:
    """Set on the iterator object: which loader and epoch it serves, the next batch index, and the
    buffered row list of the thread that called it last (valid while gen matches the buffer's).
    It keeps the loader line: the iterator may outlive its DataLoader (`for b in DataLoader(...)`)."""
    __slots__ = ("loader", "epoch", "index", "ended", "tid", "rows", "gen", "line")

    def __init__(self, loader, epoch, line):
        self.loader = loader
        self.epoch = epoch
        self.line = line
        self.index = 0
        self.ended = False
        self.tid = -1
        self.rows = None
        self.gen = -1


class _Plan:
    """What DataLoader.__init__ is called with: args None = the job's own arguments."""
    __slots__ = ("index", "args", "kwargs", "applied", "original", "not_applicable", "start")

    def __init__(self, index, start):
        self.index = index
        self.args = self.kwargs = None
        self.applied, self.original, self.not_applicable = {}, {}, {}
        self.start = start


class _Observer:
    def __init__(self, out_dir, overrides_text):
        self.out_dir = out_dir
        self.overrides_text = overrides_text
        self.overrides = None          # parsed on the first DataLoader: json is not imported before
        self.override_error = None
        self.overrides_parsed = False
        self.loaders = {}              # id(DataLoader) -> _Loader, while the loader lives
        self.next_loader = 0
        self.gen = 0
        self.encode = None
        self._start_process(os.getppid(), _thread.get_native_id())

    def _start_process(self, parent_pid, main_tid):
        self.lock = _thread.allocate_lock()
        # Each thread's kernel id, cached: gettid is a system call (over 1 us in some VMs), a
        # thread-local read is not. A new object after fork: the child's thread has a new id.
        self.tids = _thread._local()
        self.pid = os.getpid()
        self.parent_pid = parent_pid
        self.main_tid = main_tid
        self.fd = None
        self.open_failed = False
        self.groups = {}               # (loader, epoch, tid) -> rows not yet written
        self.group_lines = {}          # (loader, epoch, tid) -> that loader's line (or None)
        self.gen += 1                  # invalidates every _Epoch's cached row list
        self.pending = 0
        self.last_flush = 0
        self.kept = self.dropped = self.errors = 0
        self.error_sample = None
        self.written_loaders = set()
        self.stacks = {}               # ((code, line), ...) of a batch's callers -> id written in this file
        self.unattributed = 0
        self.finished = False

    def after_fork_in_child(self):
        """A fresh buffer and file: the parent's buffered rows are the parent's to write."""
        fd = self.fd
        self._start_process(self.pid, _thread.get_native_id())
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    # -- errors ------------------------------------------------------------------------------
    def fail(self, where, error):
        self.errors += 1
        if self.error_sample is None:
            self.error_sample = ("%s: %s: %s" % (where, type(error).__name__, error))[:500]

    # -- loaders -----------------------------------------------------------------------------
    def loader_begin(self, loader, signature, args, kwargs):
        plan = _Plan(None, time.monotonic_ns())
        try:
            with self.lock:
                plan.index = self.next_loader
                self.next_loader += 1
            overrides = self._overrides()
            if overrides and overrides.get("loader", plan.index) == plan.index:
                _plan_overrides(plan, overrides, signature, loader, args, kwargs)
        except Exception as e:  # noqa: BLE001
            plan.args = plan.kwargs = None
            self.fail("DataLoader overrides", e)
        return plan

    def loader_end(self, loader, plan, error):
        try:
            if plan.index is None:
                return
            line = {"type": "loader", "pid": self.pid, "loader": plan.index,
                    "class": _qualified(type(loader)), "ts_ns": plan.start,
                    "knobs": None if error is not None else _knobs(loader, self.fail),
                    "overrides_applied": plan.applied, "overrides_original": plan.original,
                    "overrides_not_applicable": plan.not_applicable,
                    "override_error": self.override_error,
                    "init_error": None if error is None else _describe(error)}
            if error is None:
                self._remember(loader, _Loader(plan.index, line))
            self.event(line, loader_line=line)
        except Exception as e:  # noqa: BLE001
            self.fail("DataLoader record", e)

    def _remember(self, loader, state):
        """Keeps the loader's state while it lives (a job may build a DataLoader per epoch)."""
        import weakref
        key = id(loader)
        self.loaders[key] = state
        finalizer = weakref.finalize(loader, self.loaders.pop, key, None)
        finalizer.atexit = False

    def _overrides(self):
        if not self.overrides_parsed:
            self.overrides_parsed = True
            if self.overrides_text:
                self.overrides, self.override_error = _parse_overrides(self.overrides_text)
        return self.overrides

    # -- epochs ------------------------------------------------------------------------------
    def epoch_start(self, iterator, loader, start):
        try:
            state = self.loaders.get(id(loader))
            if state is None:
                return
            epoch = _Epoch(state.index, state.epochs, state.line)
            state.epochs += 1
            object.__setattr__(iterator, _ITER_ATTR, epoch)
            self._epoch_line(iterator, epoch, start, False)
        except Exception as e:  # noqa: BLE001
            self.fail("epoch start", e)

    def epoch_restart(self, iterator, epoch, loader, start):
        try:
            state = self.loaders.get(id(loader))
            with self.lock:
                epoch.epoch = state.epochs if state is not None else epoch.epoch + 1
                epoch.index, epoch.ended, epoch.gen = 0, False, -1
            if state is not None:
                state.epochs += 1
            self._epoch_line(iterator, epoch, start, True)
        except Exception as e:  # noqa: BLE001
            self.fail("epoch reset", e)

    def adopt(self, iterator):
        """An iterator PyTorch's _get_iterator did not make: recorded as loader -1."""
        try:
            with self.lock:
                epoch = _Epoch(-1, self.unattributed, None)
                self.unattributed += 1
            object.__setattr__(iterator, _ITER_ATTR, epoch)
            self._epoch_line(iterator, epoch, time.monotonic_ns(), False)
            return epoch
        except Exception as e:  # noqa: BLE001
            self.fail("epoch adopt", e)
            return None

    def _epoch_line(self, iterator, epoch, start, reused):
        workers = [w.pid for w in (getattr(iterator, "_workers", None) or ())]
        pin = getattr(getattr(iterator, "_pin_memory_thread", None), "native_id", None)
        self.event({"type": "epoch", "pid": self.pid, "loader": epoch.loader, "epoch": epoch.epoch,
                    "start_ns": start, "workers": workers, "pin_tid": pin, "reused": reused,
                    "batches": _batches_per_epoch(iterator)},
                   loader_line=epoch.line)

    def epoch_end(self, epoch, ts):
        if epoch is None or epoch.ended:
            return
        try:
            epoch.ended = True
            self.event({"type": "epoch_end", "pid": self.pid, "loader": epoch.loader,
                        "epoch": epoch.epoch, "ts_ns": ts}, loader_line=epoch.line)
        except Exception as e:  # noqa: BLE001
            self.fail("epoch end", e)

    # -- batches (the per-batch path: kept short) ------------------------------------------
    def batch(self, epoch, start, end, data=None):
        if epoch is None:
            return
        try:
            caller = sys._getframe(2)   # batch <- __next__ <- who asked for the batch
            nbytes = _batch_bytes(data)
            tid = getattr(self.tids, "tid", None)
            if tid is None:
                tid = self.tids.tid = _thread.get_native_id()
            with self.lock:
                index = epoch.index
                epoch.index = index + 1
                if self.kept >= MAX_ROWS:
                    self.dropped += 1
                    return
                rows = epoch.rows
                if epoch.tid != tid or epoch.gen != self.gen:
                    key = (epoch.loader, epoch.epoch, tid)
                    rows = self.groups.get(key)
                    if rows is None:
                        rows = self.groups[key] = []
                        self.group_lines[key] = epoch.line
                    epoch.rows, epoch.tid, epoch.gen = rows, tid, self.gen
                rows.append((index, start, end - start, self._stack_locked(caller), nbytes))
                self.kept += 1
                self.pending += 1
                if self.pending >= FLUSH_ROWS or end - self.last_flush >= FLUSH_NS:
                    self._flush_locked(end)
        except Exception as e:  # noqa: BLE001
            self.fail("batch", e)

    def _stack_locked(self, frame):
        """The id of the stack that asked for a batch: the user's frames (the observer's and
        torch.utils.data's skipped), its line written the first time it is seen."""
        skip = _skipped_files()
        while frame is not None and frame.f_code.co_filename.startswith(skip):
            frame = frame.f_back
        key = []   # code, line, code, line, ...: one flat tuple is the cheapest key to build
        append = key.append
        for _ in range(STACK_DEPTH):
            if frame is None:
                break
            append(frame.f_code)
            append(frame.f_lineno)
            frame = frame.f_back
        key = tuple(key)
        stack = self.stacks.get(key)
        if stack is None and len(self.stacks) < MAX_STACKS:
            stack = self.stacks[key] = len(self.stacks)
            self._write_locked({"type": "stack", "pid": self.pid, "id": stack,
                                "frames": [[getattr(code, "co_qualname", code.co_name), code.co_filename, line]
                                           for code, line in zip(key[::2], key[1::2])]})
        return stack

    def _flush_locked(self, now):
        groups, lines = self.groups, self.group_lines
        self.groups, self.group_lines = {}, {}
        self.gen += 1
        self.pending = 0
        self.last_flush = now
        for key, rows in groups.items():
            if not rows:
                continue
            self._ensure_loader_locked(lines.get(key))
            loader, epoch, tid = key
            line = {"type": "batches", "pid": self.pid, "loader": loader, "epoch": epoch,
                    "tid": tid, "rows": rows}
            if not self._write_locked(line):
                self.kept -= len(rows)
                self.dropped += len(rows)

    # -- workers -----------------------------------------------------------------------------
    def worker_begin(self, signature, args, kwargs):
        """The worker loop's arguments, with init_fn wrapped to record the ready time once it
        returns (or recorded now without one); in_worker: whether this is a worker process."""
        import multiprocessing
        parent = multiprocessing.parent_process()
        if parent is None:  # not in a child process: leave it alone
            return args, kwargs, False
        bound = signature.bind(*args, **kwargs)
        worker_id = bound.arguments.get("worker_id")
        init_fn = bound.arguments.get("init_fn")
        parent_pid = parent.pid
        if init_fn is None:
            self.worker_ready(worker_id, parent_pid)
            return args, kwargs, True

        def ready_after_init(*init_args, **init_kwargs):
            result = init_fn(*init_args, **init_kwargs)
            self.worker_ready(worker_id, parent_pid)
            return result
        bound.arguments["init_fn"] = ready_after_init
        return bound.args, bound.kwargs, True

    def worker_ready(self, worker_id, parent_pid):
        try:
            self.event({"type": "worker_ready", "pid": self.pid, "worker_id": worker_id,
                        "ready_ns": time.monotonic_ns(), "parent_pid": parent_pid})
        except Exception as e:  # noqa: BLE001
            self.fail("worker ready", e)

    # -- writing -----------------------------------------------------------------------------
    def event(self, line, loader_line=None):
        """Writes one line now, after the rows buffered before it (the file stays in time order),
        and after its loader's line when this process's file lacks it."""
        with self.lock:
            if self.pending:
                self._flush_locked(time.monotonic_ns())
            self._ensure_loader_locked(loader_line)
            if line is not loader_line:
                self._write_locked(line)

    def _ensure_loader_locked(self, loader_line):
        if loader_line is None or loader_line["loader"] in self.written_loaders:
            return
        self.written_loaders.add(loader_line["loader"])
        self._write_locked(dict(loader_line, pid=self.pid))

    def _write_locked(self, line):
        if self.fd is None and not self._open_locked():
            return False
        try:
            data = self.encode(line).encode() + b"\n"
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view):]
            return True
        except Exception as e:  # noqa: BLE001
            self.fail("write", e)
            return False

    def _open_locked(self):
        if self.open_failed:
            return False
        try:
            if self.encode is None:
                import json
                self.encode = json.JSONEncoder(separators=(",", ":"), default=str).encode
            folder = _open_private_folder(self.out_dir)
            try:
                self.fd = _create(folder, self.pid)
            finally:
                os.close(folder)
        except Exception as e:  # noqa: BLE001
            self.open_failed = True
            self.fail("open", e)
            return False
        torch = sys.modules.get("torch")
        version = getattr(torch, "__version__", None)
        self._write_locked({"type": "process", "pid": self.pid, "parent_pid": self.parent_pid,
                            "main_tid": self.main_tid,
                            "python": "%d.%d.%d" % sys.version_info[:3],
                            "torch": None if version is None else str(version),
                            "argv": list(getattr(sys, "argv", [])),
                            "observer_version": OBSERVER_VERSION})
        return True

    def finish(self):
        """Writes what is buffered and the summary (once per process); never raises."""
        try:
            with self.lock:
                if self.pending:
                    self._flush_locked(time.monotonic_ns())
                if self.finished or (self.fd is None and not self.errors and not self.override_error):
                    return
                self.finished = True
                self._write_locked({"type": "summary", "pid": self.pid, "ts_ns": time.monotonic_ns(),
                                    "batches": self.kept, "dropped": self.dropped,
                                    "errors": self.errors, "error_sample": self.error_sample,
                                    "override_error": self.override_error})
        except Exception as e:  # noqa: BLE001
            self.fail("finish", e)


def _open_private_folder(out_dir):
    """A descriptor of out_dir, which the harness made: a folder, not a link, this user's, mode 0700.
    The observer never creates it: a process that outlives the trace would make it again after the
    harness removed it, where another user may have put a folder or a link of theirs first."""
    folder = os.open(out_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    st = os.fstat(folder)
    if st.st_uid != os.geteuid() or st.st_mode & 0o7777 != 0o700:
        os.close(folder)
        raise PermissionError("%s is not this user's private folder (uid %d, mode %04o)"
                              % (out_dir, st.st_uid, st.st_mode & 0o7777))
    return folder


def _create(folder, pid):
    """observer-<pid>.jsonl in the folder (a descriptor), or observer-<pid>.<n>.jsonl when a reused pid
    already left one."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_APPEND | os.O_CLOEXEC
    name = "observer-%d.jsonl" % pid
    for n in range(1, 1000):
        try:
            return os.open(name, flags, 0o644, dir_fd=folder)
        except FileExistsError:
            name = "observer-%d.%d.jsonl" % (pid, n)
    raise FileExistsError(name)


# ---------------------------------------------------------------------------------------------
# Overrides.

def _parse_overrides(text):
    """(overrides dict or None, error or None): all of it or nothing."""
    import json
    try:
        value = json.loads(text)
    except ValueError as e:
        return None, "INGERO_OBSERVER_OVERRIDES is not JSON: %s" % e
    if not isinstance(value, dict):
        return None, "INGERO_OBSERVER_OVERRIDES is not a JSON object"
    for key, v in value.items():
        kind = "index" if key == "loader" else _OVERRIDE_TYPES.get(key)
        if kind is None:
            return None, "INGERO_OBSERVER_OVERRIDES: unknown key %r (accepted: loader, %s)" % (
                key, ", ".join(sorted(_OVERRIDE_TYPES)))
        if not _valid(kind, v):
            return None, "INGERO_OBSERVER_OVERRIDES: %s=%s is not a valid %s" % (key, json.dumps(v), kind)
    return value, None


def _valid(kind, v):
    is_int = isinstance(v, int) and not isinstance(v, bool)
    if kind in ("count", "index"):
        return is_int and v >= 0
    if kind == "positive":
        return is_int and v > 0
    if kind == "bool":
        return isinstance(v, bool)
    if kind == "seconds":
        return isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
    if kind == "str":
        return isinstance(v, str)
    return v is None or isinstance(v, str)  # start_method


def _plan_overrides(plan, overrides, signature, loader, args, kwargs):
    """Fills plan with the arguments to call DataLoader.__init__ with. Arguments the signature
    does not bind leave the call as the job made it: the job gets its own TypeError."""
    try:
        bound = signature.bind(loader, *args, **kwargs)
    except TypeError:
        return
    params = signature.parameters
    given = dict(bound.arguments)
    arguments = bound.arguments

    def current(name):
        return arguments[name] if name in arguments else params[name].default

    for name, value in overrides.items():
        if name == "loader":
            continue
        if name not in params:
            plan.not_applicable[name] = "not an argument of this torch's DataLoader"
            continue
        plan.original[name] = current(name)
        plan.applied[name] = value
        arguments[name] = value
    workers = current("num_workers") if "num_workers" in params else None
    if workers == 0:
        took_workers = "num_workers" in plan.applied and plan.original["num_workers"] != 0
        for name, needs in _NEEDS_WORKERS.items():
            if name not in params:
                continue
            default = params[name].default
            if name in plan.applied and needs(plan.applied[name], default):
                plan.not_applicable[name] = "not applicable with num_workers=0"
                del plan.applied[name], plan.original[name]
                if name in given:
                    arguments[name] = given[name]
                else:
                    arguments.pop(name, None)
            if took_workers and needs(current(name), default):
                plan.original[name] = current(name)
                plan.applied[name] = default
                arguments.pop(name, None)
    args_out = bound.args[1:]  # without self
    plan.args, plan.kwargs = args_out, bound.kwargs


# ---------------------------------------------------------------------------------------------
# Describing a loader.

_PLAIN_KNOBS = ("num_workers", "prefetch_factor", "pin_memory", "persistent_workers", "batch_size",
                "drop_last", "timeout")


def _knobs(loader, fail):
    """The loader's knobs; one that cannot be read is null, and its error counted (fail)."""
    def class_name(obj):
        return None if obj is None else type(obj).__name__

    def dataset_name(dataset):
        return _qualified(type(getattr(dataset, "_datapipe", dataset)))  # the job's datapipe, not torch's wrapper

    derived = (
        ("sampler", "sampler", class_name), ("batch_sampler", "batch_sampler", class_name),
        ("collate_fn", "collate_fn", _qualified), ("worker_init_fn", "worker_init_fn", _qualified),
        ("dataset", "dataset", dataset_name),
        ("multiprocessing_context", "multiprocessing_context", _start_method),
        ("pin_memory_device", "pin_memory_device", None),
    )
    knobs = {}
    for name, attribute, describe in [(k, k, None) for k in _PLAIN_KNOBS] + list(derived):
        try:
            value = getattr(loader, attribute, None)
            knobs[name] = describe(value) if describe is not None else value
        except Exception as e:  # noqa: BLE001 -- a job's own DataLoader subclass may do anything
            knobs[name] = None
            fail("knob " + name, e)
    try:
        if hasattr(loader, "in_order"):
            knobs["in_order"] = loader.in_order
    except Exception as e:  # noqa: BLE001
        fail("knob in_order", e)
    try:
        # How workers hand tensors over (file_descriptor holds a descriptor per shared tensor); torch is
        # imported by now, since a DataLoader exists.
        multiprocessing = sys.modules.get("torch.multiprocessing")
        if multiprocessing is not None:
            knobs["sharing_strategy"] = multiprocessing.get_sharing_strategy()
    except Exception as e:  # noqa: BLE001
        fail("knob sharing_strategy", e)
    return knobs


def _start_method(context):
    if context is None:
        return None
    # A context's _name is its start method; get_start_method(allow_none=True) never sets one.
    name = getattr(context, "_name", None)
    if name is None:
        name = context.get_start_method(allow_none=True)
    return name


def _qualified(obj):
    if obj is None:
        return None
    func = getattr(obj, "func", None)
    if func is not None and type(obj).__name__ == "partial":
        return "functools.partial(%s)" % _qualified(func)
    qualname = getattr(obj, "__qualname__", None)
    module = getattr(obj, "__module__", None)
    if not isinstance(qualname, str):  # a callable object: its class
        qualname, module = type(obj).__qualname__, type(obj).__module__
    return qualname if not module else "%s.%s" % (module, qualname)


def _describe(error):
    return ("%s: %s" % (type(error).__name__, error))[:500]

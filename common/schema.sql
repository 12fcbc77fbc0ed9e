-- SPDX-License-Identifier: Apache-2.0
-- ingero-bench trace database, schema version 10 (PRAGMA user_version = 10).
-- One file holds many runs (a sweep, a CI suite, traces of several jobs). Every timestamp
-- is CLOCK_MONOTONIC nanoseconds of the node that recorded it (bpf_ktime_get_ns in the
-- kernel, the same clock in the workload), so kernel events and the workload's own batch
-- timings share one time axis; runs.started_unix anchors a run in wall-clock time.
-- Readers (explain, report, mcp, ...) only read: they refer to ops by ops.name, never by code.
-- Names a reader may rely on are listed in common/trace_contract.h.
-- Version 1 and 2 files are read through an in-memory upgrade (common/trace_schema.cc).

CREATE TABLE IF NOT EXISTS runs (
  run_id        INTEGER PRIMARY KEY,
  label         TEXT NOT NULL,          -- e.g. "loader w4 pf2 pin" or "trace: python3 train.py"
  kind          TEXT NOT NULL,          -- 'workload' | 'command' (trace -- CMD) | 'attach' (trace --pid)
                                        -- | 'system' (trace --duration: every CUDA process)
  command_json  TEXT NOT NULL,          -- argv of the traced process, JSON array ([] when attached)
  config_json   TEXT,                   -- workload configuration (workloads' config record), NULL otherwise
  result_json   TEXT,                   -- workload result record (docs/formats.md), NULL until stored
  machine_json  TEXT NOT NULL,          -- cpu model, cores, memory, kernel, gpu, driver, torch/cuda versions
  started_unix  REAL NOT NULL,          -- wall clock, seconds since the epoch, when start_ns was read
  start_ns      INTEGER NOT NULL,       -- monotonic ns when tracing began
  end_ns        INTEGER,                -- monotonic ns when tracing ended
  root_pid      INTEGER,                -- the launched process (NULL when attached)
  exit_code     INTEGER,                -- its exit status (128+signal when killed)
  status        TEXT NOT NULL,          -- 'running' | 'ok' | 'failed' | 'interrupted' | 'abandoned'
                                        -- (abandoned: the harness that wrote it died before finishing it)
  error         TEXT,                   -- why a run failed or was abandoned, in words
  traced        INTEGER NOT NULL,       -- 0 for --no-trace runs (timings only)
  system_wide   INTEGER NOT NULL DEFAULT 0,
  cuda_probes   TEXT,                   -- JSON: libraries probed, symbols attached / missing, detail level
  targets_json  TEXT,                   -- attach: the pids asked for and what became of them
  user          TEXT,                   -- the user who ran ingero-bench
  node          TEXT,                   -- the machine that recorded the run (hostname, or merge's node id)
  harness_pid   INTEGER,                -- the ingero-bench process writing the run, and its start time
  harness_start INTEGER,                --   (/proc/PID/stat field 22): a 'running' run whose harness is gone is abandoned
  sweep_id      INTEGER,                -- the sweep the run belongs to (NULL outside sweeps)
  sweep_point   TEXT,                   -- its point in that sweep (sweep_points.point)
  sweep_phase   TEXT                    -- 'measure' (the search) | 'verify' (the re-runs that prove the advice)
                                        -- | 'probe' (a budget's sizing run, not a measurement)
);
CREATE INDEX IF NOT EXISTS runs_sweep ON runs(sweep_id, sweep_point);

-- Operation codes used in events and call_stats, filled by the writer from the shared BPF
-- header (bpf/events.h). category: 'cuda_runtime' | 'cuda_driver' | 'nccl' | 'sched' | 'mm' | 'io'
-- | 'process' | 'workload'. Names the analysis relies on:
--   cuda_runtime, cuda_driver, nccl: the probed function's symbol (cudaLaunchKernel, cuLaunchKernel,
--                 cudaMemcpyAsync, cudaStreamSynchronize, ncclAllReduce, ...): one event per call
--                 delivered to user space (see call_stats for which calls are)
--   sched:        offcpu_preempted (thread switched out while runnable; dur = time until it ran again)
--                 offcpu_blocked   (thread switched out sleeping/blocked; dur = time until it ran again;
--                                   arg = the thread whose wakeup ended it: its pid << 32 | its tid,
--                                   absent when unknown; from schema version 3)
--                 offcpu_io        (a blocked interval slept in I/O wait: a read waiting for the disk, a
--                                   page-cache miss; otherwise as offcpu_blocked; from schema version 5,
--                                   earlier traces hold these as offcpu_blocked)
--                 runq_wait        (woken/preempted -> running; dur = run-queue latency)
--   mm:           page_faults (a burst of a thread's user page faults: arg = how many, from ts to ts+dur)
--                 page_allocs (a burst of a thread's page allocations: arg = how many, bytes = their size)
--                 A thread's bursts add up to its thread_stats.page_faults / page_allocs.
--   io:           block_io (issue -> complete; bytes = request size, ret = block status)
--   process:      fork (pid/tid = parent, arg = child pid), exec, exit (last thread of a process;
--                 ret = exit code, 128+signal when killed), thread_start, thread_exit (ret = exit code),
--                 rename (a thread's new name is in the threads table),
--                 oom_kill (the OOM killer chose pid/tid; arg = the thread whose allocation invoked it:
--                 its pid << 32 | its tid; schema version 10, Linux 6.8 on),
--                 fatal_signal (SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGKILL, SIGSEGV or SIGSYS sent to pid/tid;
--                 arg = the signal, ret = its si_code (128: SI_KERNEL), stream = the sending thread as
--                 pid << 32 | tid; schema version 10)
--   workload:     batch_wait (main loop waiting for the next batch; arg = batch index; stream = the loader
--                 (loaders.loader) when the Python observer recorded it in a user's job)
--                 batch_compute (main loop moving it to the device and running the model, or, in a user's
--                 job, whatever the loop did until it asked for the next batch; arg, stream as batch_wait)
--                 worker_start (a loader worker from fork to ready for its first task; pid/tid = the
--                 worker, arg = worker id)
CREATE TABLE IF NOT EXISTS ops (
  op        INTEGER PRIMARY KEY,
  name      TEXT NOT NULL UNIQUE,
  category  TEXT NOT NULL
);

-- Individual events: library calls as call_stats says, sched intervals above the run's
-- thresholds (run_settings), memory bursts, block I/O, process events, workload intervals.
-- Exact totals live in thread_stats, call_stats and the histograms.
CREATE TABLE IF NOT EXISTS events (
  run_id  INTEGER NOT NULL,
  ts_ns   INTEGER NOT NULL,   -- start of the call / interval (monotonic ns)
  dur_ns  INTEGER NOT NULL,   -- 0 for instantaneous events
  pid     INTEGER NOT NULL,   -- tgid
  tid     INTEGER NOT NULL,
  op      INTEGER NOT NULL REFERENCES ops(op),
  ret     INTEGER,            -- return code (CUDA, NCCL), exit code (exit)
  bytes   INTEGER,            -- bytes moved / allocated where the op has a size
  arg     INTEGER,            -- op-specific: memcpy kind (cudaMemcpy*), kernel function (launches),
                              -- pointer (frees), flags (host alloc/register), event handle, datatype
                              -- (NCCL), child pid (fork), count (page_faults, page_allocs),
                              -- batch index (batch_*), worker id (worker_start)
  stream  INTEGER             -- CUDA stream handle where the call takes one (0 = default stream)
);
CREATE INDEX IF NOT EXISTS events_run_op_ts  ON events(run_id, op, ts_ns);
CREATE INDEX IF NOT EXISTS events_run_tid_ts ON events(run_id, tid, ts_ns);

-- Events persisted during a burst faster than the indexed events table takes them:
-- packed records (tracer/event_writer.h, EventRecord: 64 bytes, little-endian), moved
-- into events by the writer as it catches up and always before the run ends, so the
-- table is empty after a completed run. Rows left here mean the tracer process died.
CREATE TABLE IF NOT EXISTS event_batches (
  run_id   INTEGER NOT NULL,
  seq      INTEGER NOT NULL,
  count    INTEGER NOT NULL,
  records  BLOB NOT NULL,
  PRIMARY KEY (run_id, seq)
);

-- Processes and threads seen in the traced tree. role: 'main' | 'worker' | 'pin' | 'other'
-- (from the names loaders give threads: "ib-worker-N", "ib-pin", PyTorch's "pt_data_worker",
-- "pt_data_pin"; 'main' is the main thread of a launched or attached process).
CREATE TABLE IF NOT EXISTS threads (
  run_id    INTEGER NOT NULL,
  tid       INTEGER NOT NULL,
  pid       INTEGER NOT NULL,
  ppid      INTEGER,            -- parent process (for the process's main thread)
  comm      TEXT NOT NULL,
  role      TEXT NOT NULL,
  rank      INTEGER,            -- torch.distributed rank of the process (RANK in its environment), NULL if none
  uid       INTEGER,            -- the process's user id, where read
  start_ns  INTEGER,
  exit_ns   INTEGER,
  exit_code INTEGER,
  PRIMARY KEY (run_id, tid)
);

-- Exact per-thread totals kept in the kernel, read once at the end of the run.
CREATE TABLE IF NOT EXISTS thread_stats (
  run_id               INTEGER NOT NULL,
  tid                  INTEGER NOT NULL,
  pid                  INTEGER NOT NULL,
  voluntary_switches   INTEGER NOT NULL,  -- switched out while blocked
  involuntary_switches INTEGER NOT NULL,  -- switched out while runnable (preempted)
  oncpu_ns             INTEGER NOT NULL,
  offcpu_ns            INTEGER NOT NULL,
  offcpu_max_ns        INTEGER NOT NULL,  -- worst single off-CPU stall
  runq_count           INTEGER NOT NULL,
  runq_ns              INTEGER NOT NULL,
  page_allocs          INTEGER NOT NULL,  -- mm_page_alloc hits
  page_alloc_bytes     INTEGER NOT NULL,
  page_faults          INTEGER NOT NULL,  -- user page faults
  io_count             INTEGER NOT NULL,  -- block I/O requests issued by the thread
  io_bytes             INTEGER NOT NULL,
  io_ns                INTEGER NOT NULL,  -- their summed issue -> complete time
  iowait_count         INTEGER,           -- blocked intervals slept in I/O wait (schema 5 on; NULL before)
  iowait_ns            INTEGER,           -- their summed length
  cache_pages_added    INTEGER,           -- pages its reads brought into the page cache (a miss filled)
  PRIMARY KEY (run_id, tid)
);

-- Exact per-thread totals of every probed library call, kept in the kernel. A call is
-- counted when it enters the function; returns/total_ns/max_ns cover the calls whose
-- return was probed (none at --cuda-detail count). streamed: how many are also in events
-- (all of them unless the op is a hot one, a kernel launch, and was faster than the
-- run's call_stream_min_ns setting); streamed = returns means the events hold every call.
-- cut_calls (schema version 9): probed calls that could not be timed, because their entry and their
-- return were not both seen in one window of a duty cycle (a window's probes come and go one at a
-- time), or a return came with no open entry of its own; they are in none of returns, total_ns,
-- max_ns, the histogram and the events. NULL in a file before version 9.
CREATE TABLE IF NOT EXISTS call_stats (
  run_id    INTEGER NOT NULL,
  tid       INTEGER NOT NULL,
  pid       INTEGER NOT NULL,
  op        INTEGER NOT NULL REFERENCES ops(op),
  calls     INTEGER NOT NULL,
  returns   INTEGER NOT NULL,
  errors    INTEGER NOT NULL,   -- returned non-zero
  total_ns  INTEGER NOT NULL,
  max_ns    INTEGER NOT NULL,
  bytes     INTEGER NOT NULL,
  streamed  INTEGER NOT NULL,
  cut_calls INTEGER,
  PRIMARY KEY (run_id, tid, op)
);

-- Hot functions that were duty-cycled (schema version 4): in this process (pid 0: in every
-- process, system-wide), from since_ns to until_ns, the function was probed only during
-- `windows` windows adding up to attached_ns. call_stats and call_histograms of that process
-- and op then hold only the probed calls (probed_calls: those before sampling began and in the
-- windows); the whole count is estimated: estimated_calls with its 95 % interval
-- [estimated_low, estimated_high] (estimated_high NULL: no upper bound, the probes' own traps
-- took most of the windows). rate_clock says what the windows' rates were taken per: 'on_cpu'
-- (a second of the calling threads' on-CPU time, applied to theirs in the gaps) or 'wall' (a wall
-- second: some caller's on-CPU time could not be read); NULL before schema version 6.
-- trap_cost_scale (schema version 8): what the windows' rates took a trap to cost, as a multiple of
-- the calibrated cost (run setting probe_call_ns): the return probe's program time per hit in the
-- windows over its time per hit in the calibration (run setting probe_return_program_ns). NULL: the
-- calibrated cost stood (no return probe, the kernel's run-time statistics off, too few hits, or a
-- file before version 8).
-- A process and op without a row here were counted exactly.
CREATE TABLE IF NOT EXISTS call_sampling (
  run_id           INTEGER NOT NULL,
  pid              INTEGER NOT NULL,
  op               INTEGER NOT NULL REFERENCES ops(op),
  since_ns         INTEGER NOT NULL,
  until_ns         INTEGER NOT NULL,
  windows          INTEGER NOT NULL,
  attached_ns      INTEGER NOT NULL,
  probed_calls     INTEGER NOT NULL,
  estimated_calls  INTEGER NOT NULL,
  estimated_low    INTEGER NOT NULL,
  estimated_high   INTEGER,
  rate_clock       TEXT,
  trap_cost_scale  REAL,
  PRIMARY KEY (run_id, pid, op)
);

-- Each attached window of a function in call_sampling (schema version 7), in order: when its
-- probes were in (start_ns to end_ns, the trace's clock), the calls they counted and the share of
-- their callers' time the probes' traps took (calibrated cost x hits); then, on the calling threads'
-- on-CPU clock, their time in the detached gap before the window and in it, their calls in it, and
-- the calls the probes counted outside those readings (as they went in or came out), which the gaps'
-- time holds. The callers' columns are NULL where their on-CPU time could not be read.
-- return_program_runs and return_program_ns (schema version 8): the return probe's program while the
-- window's probes were in, its runs and their time on every CPU, for every probed function (NULL: not
-- timed, or no return probe); call_sampling.trap_cost_scale is pooled from the windows where they are
-- nearly all this function's own returns. These are what the estimate was
-- computed from: where the function was watched, and where it was not.
CREATE TABLE IF NOT EXISTS call_sampling_windows (
  run_id                 INTEGER NOT NULL,
  pid                    INTEGER NOT NULL,
  op                     INTEGER NOT NULL REFERENCES ops(op),
  seq                    INTEGER NOT NULL,  -- the window's place, from 0
  start_ns               INTEGER NOT NULL,
  end_ns                 INTEGER NOT NULL,
  calls                  INTEGER NOT NULL,
  trapped_share          REAL NOT NULL,
  callers_gap_before_ns  INTEGER,
  callers_window_ns      INTEGER,
  callers_calls          INTEGER,
  callers_trapped_ns     REAL,
  counted_in_gaps        INTEGER,
  return_program_runs    INTEGER,
  return_program_ns      INTEGER,
  PRIMARY KEY (run_id, pid, op, seq)
);

-- In-kernel log2 latency histograms of every probed call that returned, per process and op:
-- slot k counts durations in [2^k, 2^(k+1)) nanoseconds (slot 0 also holds 0 and 1 ns).
CREATE TABLE IF NOT EXISTS call_histograms (
  run_id  INTEGER NOT NULL,
  pid     INTEGER NOT NULL,
  op      INTEGER NOT NULL REFERENCES ops(op),
  slot    INTEGER NOT NULL,
  count   INTEGER NOT NULL,
  PRIMARY KEY (run_id, pid, op, slot)
);

-- In-kernel log2 histograms over every event (runqlat's model).
-- metric: 'runq_us' | 'offcpu_us' | 'io_us'; slot k counts values in [2^k, 2^(k+1)) microseconds,
-- slot 0 also holds values below 1 us.
CREATE TABLE IF NOT EXISTS histograms (
  run_id  INTEGER NOT NULL,
  pid     INTEGER NOT NULL,
  metric  TEXT NOT NULL,
  slot    INTEGER NOT NULL,
  count   INTEGER NOT NULL,
  PRIMARY KEY (run_id, pid, metric, slot)
);

-- Every event that could not be delivered, per source. Written once per traced run when
-- tracing ends; a traced run without rows here has unknown losses (its harness died).
CREATE TABLE IF NOT EXISTS losses (
  run_id   INTEGER NOT NULL,
  source   TEXT NOT NULL,     -- ring buffer name ('cuda', 'sched', 'proc'), 'queue' for the user-space
                              -- writer queue, 'writer' for SQLite write failures, and in-kernel maps that
                              -- were full: 'cuda_inflight', 'io_inflight', 'mem_bursts', 'tgid_filter'
                              -- (events lost), 'thread_stats', 'task_clocks', 'histograms', 'call_stats'
                              -- (totals incomplete)
  dropped  INTEGER NOT NULL,
  offered  INTEGER,           -- events the source tried to deliver (rings, queue); NULL where not counted
  PRIMARY KEY (run_id, source)
);

CREATE TABLE IF NOT EXISTS run_settings (
  run_id  INTEGER NOT NULL,
  key     TEXT NOT NULL,      -- e.g. 'offcpu_min_ns', 'iowait_min_ns', 'runq_min_ns', 'ringbuf_bytes', 'cuda_detail',
                              -- 'call_stream_min_ns', 'mem_burst_pages', 'mem_burst_min_ns', 'trace_problem',
                              -- 'world_size'
                              -- (the WORLD_SIZE the run's ranked processes were started with),
                              -- 'batch_source' ('observer': the Python observer wrote the batch events
                              -- of a user's job; workload runs' come from their record),
                              -- 'observer' ('on' | 'off' | 'unused': no Python process built a DataLoader),
                              -- 'gpu_sampler' ('nvml' | why not)
  value   TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
);

-- A sweep: the search for the best loader configuration (ingero-bench sweep). Its runs carry
-- sweep_id; each point's state says whether it was measured, pruned or skipped, its reason why
-- in words, and its cause why as a value readers compare.
CREATE TABLE IF NOT EXISTS sweeps (
  sweep_id           INTEGER PRIMARY KEY,
  started_unix       REAL NOT NULL,
  ended_unix         REAL,
  status             TEXT NOT NULL,   -- 'running' | 'done' | 'interrupted' | 'failed' | 'abandoned'
  request_json       TEXT NOT NULL,   -- what was asked: modes, grids, workload flags, budget
  rules_json         TEXT NOT NULL,   -- the repeat / prune / verify rules with their numbers
  baseline_point     TEXT,            -- sweep_points.point of the baseline configuration
  recommended_point  TEXT,            -- the recommendation, once verified
  node               TEXT,            -- the machine that ran the sweep
  harness_pid        INTEGER,
  harness_start      INTEGER
);

CREATE TABLE IF NOT EXISTS sweep_points (
  sweep_id     INTEGER NOT NULL,
  point        TEXT NOT NULL,         -- the configuration's label, unique in the sweep
  position     INTEGER NOT NULL,      -- order in the plan
  config_json  TEXT NOT NULL,         -- the workload configuration
  state        TEXT NOT NULL,         -- 'pending' | 'measured' | 'pruned' | 'failed' | 'skipped'
  reason       TEXT,                  -- why pruned, skipped or failed, with the numbers
  cause        TEXT,                  -- why skipped or stopped short: 'budget' | 'duplicate' | 'off_path'
                                      -- (contract::point_cause); NULL otherwise, and in a file older than
                                      -- version 10, whose reader derives it from the reason
  PRIMARY KEY (sweep_id, point)
);

-- DataLoaders that the Python observer saw being built in a launched job (trace -- CMD): one row
-- per loader per process. Their batch_wait / batch_compute events carry the loader in `stream`.
CREATE TABLE IF NOT EXISTS loaders (
  run_id      INTEGER NOT NULL,
  pid         INTEGER NOT NULL,
  loader      INTEGER NOT NULL,       -- construction order in its process, from 0
  knobs_json  TEXT NOT NULL,          -- num_workers, prefetch_factor, pin_memory, persistent_workers,
                                      -- batch_size, sampler, collate_fn, dataset, multiprocessing_context, ...
  overrides_json TEXT,                -- {"applied", "original", "not_applicable", "error"} when an override was asked
  epochs      INTEGER NOT NULL,       -- iterations started (iter() or a persistent iterator's reset)
  batches     INTEGER NOT NULL,       -- next() calls that returned a batch
  wait_ns     INTEGER NOT NULL,       -- their summed waits
  workers_json TEXT,                  -- the worker pids of its last epoch, JSON array
  PRIMARY KEY (run_id, pid, loader)
);

-- GPUs seen by NVML during a run, and their utilisation as the driver sampled it. metric:
-- 'gpu_util' (% of the sample period a kernel ran), 'mem_util' (memory controller busy %),
-- 'sm_active' (GPM SM utilisation %, Hopper and newer, where permitted). ts_ns on the run's clock.
CREATE TABLE IF NOT EXISTS gpus (
  run_id      INTEGER NOT NULL,
  gpu         INTEGER NOT NULL,       -- NVML device index
  name        TEXT,
  uuid        TEXT,
  pci_bus_id  TEXT,
  PRIMARY KEY (run_id, gpu)
);
CREATE TABLE IF NOT EXISTS gpu_samples (
  run_id  INTEGER NOT NULL,
  gpu     INTEGER NOT NULL,
  ts_ns   INTEGER NOT NULL,
  metric  TEXT NOT NULL,
  value   REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS gpu_samples_run ON gpu_samples(run_id, metric, ts_ns);

-- CPU profiles (schema version 10): on-CPU samples of the traced threads, taken by a BPF program on
-- the kernel's software CPU clock (run settings 'profile_hz', the rate per CPU, 0 when off;
-- 'profile_python': 'ok' or why Python frames are unavailable; 'profile_bucket_ns': the width of a time
-- bucket; 'profile_sample_ns' and 'profile_cost_ns': the profile program's mean and total run time). Each
-- sample is 1 / profile_hz seconds of its thread's CPU time. Frames and stacks are interned per run.
-- kind: 'python' | 'native' | 'kernel'. name: a Python function's qualified name, a native or kernel
-- symbol, or, where no symbol covers it, the offset in the file (native, file set), or the address
-- (kernel; native code outside any file), in hex. file: the Python source file, the native binary,
-- '[kernel]' or '[MODULE]'; NULL for native code outside any file, and '[unknown]' names a sample whose
-- stacks could not be walked. line: the Python line; line_kind: 'executing' (the line the frame was
-- running) or 'first' (the function's first line, where the executing one could not be read); both NULL
-- for native and kernel frames.
CREATE TABLE IF NOT EXISTS profile_frames (
  run_id    INTEGER NOT NULL,
  frame_id  INTEGER NOT NULL,
  kind      TEXT NOT NULL,
  name      TEXT NOT NULL,
  file      TEXT,
  line      INTEGER,
  line_kind TEXT,
  PRIMARY KEY (run_id, frame_id)
);

-- A stack is a node of a tree: its innermost frame, and the stack of its callers (parent_id; NULL at
-- the outermost frame). Walking parent_id from a sample's stack lists its frames, the sampled code first.
CREATE TABLE IF NOT EXISTS profile_stacks (
  run_id    INTEGER NOT NULL,
  stack_id  INTEGER NOT NULL,
  parent_id INTEGER,
  frame_id  INTEGER NOT NULL,
  PRIMARY KEY (run_id, stack_id)
);

-- Samples per thread, stack and time bucket (bucket_ns: the bucket's start on the run's clock).
CREATE TABLE IF NOT EXISTS profile_samples (
  run_id    INTEGER NOT NULL,
  tid       INTEGER NOT NULL,
  stack_id  INTEGER NOT NULL,
  bucket_ns INTEGER NOT NULL,
  samples   INTEGER NOT NULL,
  PRIMARY KEY (run_id, tid, stack_id, bucket_ns)
);

-- Memory and descriptors of each traced process, sampled from /proc at a low rate (schema version 10;
-- run setting 'health_interval_ns'): rss and swap (/proc/PID/status, or smaps_rollup where read); pss and
-- private_dirty (pages the process wrote to its own copy: copy-on-write growth after a fork shows here)
-- from /proc/PID/smaps_rollup, which walks the page tables and so is read less often for a large
-- process (NULL in the rows between; tracer/process_sampler.h); its open
-- descriptors and soft RLIMIT_NOFILE; the /dev/shm it sees (its own mount namespace): size and free
-- bytes; wchan: where its main thread slept (/proc/PID/wchan: futex_wait_queue, anon_pipe_read, ...),
-- NULL while it ran. A column is NULL where it could not be read.
CREATE TABLE IF NOT EXISTS process_samples (
  run_id               INTEGER NOT NULL,
  pid                  INTEGER NOT NULL,
  ts_ns                INTEGER NOT NULL,
  rss_bytes            INTEGER,
  pss_bytes            INTEGER,
  private_dirty_bytes  INTEGER,
  swap_bytes           INTEGER,
  fds                  INTEGER,
  fd_limit             INTEGER,
  shm_size_bytes       INTEGER,
  shm_free_bytes       INTEGER,
  wchan                TEXT,
  PRIMARY KEY (run_id, pid, ts_ns)
);

-- The stack that made an event (schema version 11): a slow library call's (taken in the kernel as the
-- call returned), a batch wait's (the Python frames that asked the DataLoader for the batch, from the
-- observer), a hung thread's (where it waited, read when the hang was seen). The event is this run's
-- event of that tid, ts_ns and op; stack_id is a profile_stacks node (its frames in profile_frames).
CREATE TABLE IF NOT EXISTS event_stacks (
  run_id    INTEGER NOT NULL,
  tid       INTEGER NOT NULL,
  ts_ns     INTEGER NOT NULL,
  op        INTEGER NOT NULL REFERENCES ops(op),
  stack_id  INTEGER NOT NULL,
  PRIMARY KEY (run_id, tid, ts_ns, op)
);

-- ingero-bench trace database, schema version 1 (PRAGMA user_version = 1).
-- One file holds many runs (a sweep). Every timestamp is CLOCK_MONOTONIC nanoseconds
-- (bpf_ktime_get_ns in the kernel, std::chrono::steady_clock in the workload), so
-- kernel events and the workload's own batch timings share one time axis.
-- Analysis (reports/) reads only this file; it refers to ops by ops.name, never by code.

CREATE TABLE IF NOT EXISTS runs (
  run_id        INTEGER PRIMARY KEY,
  label         TEXT NOT NULL,          -- e.g. "loader w4 pf2 pin" or "trace: python3 train.py"
  kind          TEXT NOT NULL,          -- 'workload' (ingero-bench --workload) or 'command' (ingero-bench trace)
  command_json  TEXT NOT NULL,          -- argv of the traced process, JSON array
  config_json   TEXT,                   -- workload configuration (workloads' config record), NULL for 'command'
  result_json   TEXT,                   -- workload result record (versioned, see workloads/result.h), NULL until done
  machine_json  TEXT NOT NULL,          -- cpu model, cores, memory, kernel, gpu, driver, torch/cuda versions
  started_unix  REAL NOT NULL,          -- wall clock, seconds since the epoch
  start_ns      INTEGER NOT NULL,       -- monotonic ns when tracing began
  end_ns        INTEGER,                -- monotonic ns when tracing ended
  root_pid      INTEGER,                -- the traced process
  exit_code     INTEGER,                -- its exit status (128+signal when killed)
  status        TEXT NOT NULL,          -- 'running' | 'ok' | 'failed' | 'interrupted'
  traced        INTEGER NOT NULL,       -- 0 for --no-trace runs (timings only)
  system_wide   INTEGER NOT NULL DEFAULT 0,
  cuda_probes   TEXT                    -- JSON: libraries probed and symbols attached / missing
);

-- Operation codes used in events and histograms. Filled by the writer from the
-- shared BPF header (bpf/events.h) plus the workload's own ops.
-- category: 'cuda_runtime' | 'cuda_driver' | 'sched' | 'mm' | 'io' | 'process' | 'workload'
-- Names the analysis relies on:
--   cuda_runtime: cudaMalloc cudaFree cudaMallocHost cudaHostAlloc cudaFreeHost cudaHostRegister cudaMemcpy
--                 cudaMemcpyAsync cudaMemsetAsync cudaLaunchKernel cudaStreamSynchronize
--                 cudaDeviceSynchronize cudaEventSynchronize cudaStreamWaitEvent
--   cuda_driver:  cuLaunchKernel cuMemAlloc_v2 cuMemFree_v2 cuMemcpyHtoDAsync_v2 cuMemcpyAsync
--                 cuStreamSynchronize cuCtxSynchronize cuMemHostAlloc
--   sched:        offcpu_preempted (thread switched out while runnable; dur = time until it ran again)
--                 offcpu_blocked   (thread switched out sleeping/blocked; dur = time until it ran again)
--                 runq_wait        (woken/preempted -> running; dur = run-queue latency)
--   mm:           page_fault (user page fault; counted per thread in thread_stats.page_faults,
--                 no individual events are recorded)
--   io:           block_io (issue -> complete; bytes = request size)
--   process:      fork (pid/tid = parent, arg = child pid), exec, exit (last thread of a process;
--                 ret = exit code, 128+signal when killed), thread_start, thread_exit (ret = exit code),
--                 rename (a thread's new name is in the threads table)
--   workload:     batch_wait (main loop waiting for the next batch; arg = batch index)
--                 batch_compute (main loop moving it to the device and running the model; arg = batch index)
CREATE TABLE IF NOT EXISTS ops (
  op        INTEGER PRIMARY KEY,
  name      TEXT NOT NULL UNIQUE,
  category  TEXT NOT NULL
);

-- Individual events. CUDA calls are all recorded (entry/return paired per thread);
-- sched intervals only above the run's thresholds (see run_settings), the exact
-- totals live in thread_stats and histograms.
CREATE TABLE IF NOT EXISTS events (
  run_id  INTEGER NOT NULL,
  ts_ns   INTEGER NOT NULL,   -- start of the call / interval (monotonic ns)
  dur_ns  INTEGER NOT NULL,   -- 0 for instantaneous events
  pid     INTEGER NOT NULL,   -- tgid
  tid     INTEGER NOT NULL,
  op      INTEGER NOT NULL REFERENCES ops(op),
  ret     INTEGER,            -- return code (CUDA), exit code (exit)
  bytes   INTEGER,            -- bytes moved / allocated where the op has a size
  arg     INTEGER,            -- op-specific: memcpy kind (cudaMemcpy*), kernel function (launches),
                              -- pointer (frees), flags (host alloc/register), event handle,
                              -- child pid (fork), batch index (workload)
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

-- Processes and threads of the traced tree. role: 'main' | 'worker' | 'pin' | 'other'
-- (derived from the thread names the workload sets: "ib-worker-N", "ib-pin", or PyTorch's
--  "pt_data_worker"/"pt_main_thread" conventions where present).
CREATE TABLE IF NOT EXISTS threads (
  run_id    INTEGER NOT NULL,
  tid       INTEGER NOT NULL,
  pid       INTEGER NOT NULL,
  ppid      INTEGER,            -- parent process (for the process's main thread)
  comm      TEXT NOT NULL,
  role      TEXT NOT NULL,
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
  io_count             INTEGER NOT NULL,
  io_bytes             INTEGER NOT NULL,
  io_ns                INTEGER NOT NULL,
  PRIMARY KEY (run_id, tid)
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

-- Every event that could not be delivered, per ring buffer; plus thresholds used.
CREATE TABLE IF NOT EXISTS losses (
  run_id   INTEGER NOT NULL,
  source   TEXT NOT NULL,     -- ring buffer name ('cuda', 'sched', 'proc'), 'queue' for the user-space
                              -- writer queue, 'writer' for SQLite write failures, 'cuda_inflight' and
                              -- 'thread_stats' for in-kernel maps that were full
  dropped  INTEGER NOT NULL,
  offered  INTEGER,           -- events the source tried to deliver (rings, queue); NULL where not counted
  PRIMARY KEY (run_id, source)
);

CREATE TABLE IF NOT EXISTS run_settings (
  run_id  INTEGER NOT NULL,
  key     TEXT NOT NULL,      -- e.g. 'offcpu_min_ns', 'runq_min_ns', 'ringbuf_bytes'
  value   TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
);

-- Derived tables owned by reports/ (causal chains, ...) are created by reports/ itself.

// SPDX-License-Identifier: Apache-2.0
#include "tracer/trace_db.h"

#include <cmath>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/clock.h"
#include "common/proc_files.h"
#include "common/trace_contract.h"
#include "common/trace_schema.h"

namespace ingero::tracer {

namespace {

// How long a statement waits for another writer's lock (a concurrent sweep on one file).
constexpr int kBusyTimeoutMs = 30'000;

// This process, as runs.harness_pid / harness_start name it.
struct Harness {
  int64_t pid;
  std::optional<int64_t> start;
};
Harness this_harness() {
  auto stat = proc::read_stat(getpid());
  return {getpid(), stat ? std::optional<int64_t>(static_cast<int64_t>(stat->start_time)) : std::nullopt};
}

std::string hostname() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::string user_name() {
  if (const char* sudo = getenv("SUDO_USER"); sudo && *sudo) return sudo;
  if (const char* user = getenv("USER"); user && *user) return user;
  return std::to_string(geteuid());
}

Status run_statement(const sql::Connection& db, std::string_view text, const std::function<void(sql::Statement&)>& bind) {
  auto stmt = db.prepare(text);
  if (!stmt) return stmt.error();
  bind(*stmt);
  return stmt->run();
}

// A failure to store something, named for the user; SQLite's message and hint follow.
Error storing(const Status& failed, const std::string& what) {
  Error e = failed.error();
  e.message = fmt::format("cannot store {}: {}", what, e.message);
  return e;
}

Status create_parent_directory(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec)
    return Error::bad_input(fmt::format("cannot create directory {}: {}", parent.string(), ec.message()),
                            "choose a --db path in a writable directory");
  return {};
}

// An existing DB is appended to only when SQLite finds it intact: runs written into a damaged file
// could be lost with it, or make it worse. quick_check reads every page once (not the indexes
// against their tables, as integrity_check does): seconds for a DB of gigabytes.
Status check_intact(const sql::Connection& db, const std::string& path) {
  auto check = db.prepare("PRAGMA quick_check(1)");
  std::string answer;
  if (check) {
    auto row = check->step();
    answer = !row ? row.error().message : *row ? check->column_text(0) : "no answer";
  } else {
    answer = check.error().message;
  }
  // A file that is no SQLite DB at all is said so by the schema check that follows.
  if (answer == "ok" || answer.find("not a database") != std::string::npos) return {};
  return Error::bad_input(fmt::format("the trace DB {} is damaged (SQLite's quick_check: {}); runs are not added to it",
                                      path, answer),
                          "pass a new --db FILE (the damaged one can still be read: ingero-bench runs --db " + path + ")");
}

// Opens, creates or upgrades, and switches to WAL. A file this call created is removed
// again if it cannot be made a trace DB (a full disk would otherwise leave 0 bytes behind).
Result<sql::Connection> open_for_writing(const std::string& path) {
  if (path.empty()) return Error::bad_input("the trace DB path is empty", "pass --db FILE");
  // Only a regular file or a new path: a device reports size 0 and would be overwritten as a
  // new DB, and SQLite would create its journal beside it (/dev/null-journal).
  if (Status s = check_writable_db("--db", path); !s) return s.error();
  if (Status s = create_parent_directory(path); !s) return s.error();
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  auto db = sql::open(path, sql::Mode::read_write, kBusyTimeoutMs);
  auto cleanup = [&](Error e) -> Result<sql::Connection> {
    if (!existed) {
      *db = sql::Connection();
      std::filesystem::remove(path, ec);
    }
    return e;
  };
  if (!db) return db.error();
  if (existed)
    if (Status s = check_intact(*db, path); !s) return s.error();
  if (Status s = schema::create_or_upgrade(*db); !s) return cleanup(s.error());
  if (Status s = db->exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL"); !s) return cleanup(s.error());
  return db;
}

}  // namespace

uint64_t TraceTotals::events_lost() const {
  uint64_t lost = 0;
  for (const TraceLoss& loss : losses)
    if (contract::loss_drops_events(loss.source)) lost += loss.dropped;
  return lost;
}

bool TraceTotals::calls_traced() const {
  for (const ProbedLibrary& library : libraries)
    if (!library.attached.empty()) return true;
  return false;
}

// ---- TraceDb ------------------------------------------------------------------------

Result<TraceDb> TraceDb::open(const std::string& path) {
  auto db = open_for_writing(path);
  if (!db) return db.error();
  TraceDb trace(std::move(*db));
  if (Status s = trace.mark_abandoned(); !s) return s.error();
  return trace;
}

TraceDb::~TraceDb() {
  if (!db_.get()) return;
  // Back to a rollback journal unless another process still has the file open (then
  // SQLite refuses, and the last one to close does it).
  (void)db_.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  (void)db_.exec("PRAGMA journal_mode = DELETE");
}

Status TraceDb::mark_abandoned() {
  struct Owned {
    const char* table;
    const char* key;
  };
  for (const Owned owned : {Owned{"runs", "run_id"}, Owned{"sweeps", "sweep_id"}}) {
    auto running = db_.prepare(fmt::format(
        "SELECT {}, harness_pid, harness_start FROM {} WHERE status = 'running' AND (node IS NULL OR node = ?)",
        owned.key, owned.table));
    if (!running) return running.error();
    running->bind(1, hostname());
    std::vector<int64_t> gone;
    Status read = running->for_each_row([&](const sql::Statement& row) {
      auto pid = row.column_optional_int(1);
      auto start = row.column_optional_int(2);
      if (!pid || !start || !proc::is_alive(static_cast<pid_t>(*pid), static_cast<uint64_t>(*start)))
        gone.push_back(row.column_int(0));
    });
    if (!read) return read;
    for (int64_t id : gone) {
      Status s = run_statement(db_,
                               fmt::format("UPDATE {} SET status = 'abandoned' {} WHERE {} = ?", owned.table,
                                           std::string(owned.table) == "runs"
                                               ? ", error = coalesce(error, 'the ingero-bench process writing it "
                                                 "died before finishing it (killed, or the machine stopped)')"
                                               : "",
                                           owned.key),
                               [&](sql::Statement& st) { st.bind(1, id); });
      if (!s) return s;
    }
  }
  return {};
}

Result<int64_t> TraceDb::begin_run(const RunStart& start) {
  const Harness harness = this_harness();
  Status s = run_statement(
      db_,
      "INSERT INTO runs(label, kind, command_json, config_json, machine_json, started_unix, start_ns, status, "
      "traced, system_wide, targets_json, user, node, harness_pid, harness_start, sweep_id, sweep_point, "
      "sweep_phase) VALUES(?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      [&](sql::Statement& st) {
        st.bind(1, start.label)
            .bind(2, start.kind)
            .bind(3, nlohmann::json(start.command).dump())
            .bind(4, start.config_json)
            .bind(5, start.machine_json)
            .bind(6, unix_now_s())
            .bind(7, monotonic_ns())
            .bind(8, int64_t{start.traced})
            .bind(9, int64_t{start.system_wide})
            .bind(10, start.targets_json)
            .bind(11, user_name())
            .bind(12, hostname())
            .bind(13, harness.pid)
            .bind(14, harness.start)
            .bind(15, start.sweep_id)
            .bind(16, start.sweep_point)
            .bind(17, start.sweep_phase);
      });
  if (!s) return storing(s, fmt::format("the start of run '{}'", start.label));
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_.get()));
}

namespace {

// run_settings rows, in the caller's transaction.
Status insert_settings(const sql::Connection& db, int64_t run_id,
                       const std::vector<std::pair<std::string, std::string>>& settings) {
  auto setting = db.prepare("INSERT OR REPLACE INTO run_settings(run_id, key, value) VALUES(?, ?, ?)");
  if (!setting) return setting.error();
  for (const auto& [key, value] : settings)
    if (Status s = setting->bind(1, run_id).bind(2, key).bind(3, value).run(); !s) return s;
  return {};
}

}  // namespace

Status TraceDb::finish_run(int64_t run_id, const RunEnd& end) {
  auto txn = sql::Transaction::begin(db_.get());
  if (!txn) return storing(txn.error(), fmt::format("the end of run {}", run_id));
  Status s = run_statement(db_,
                           "UPDATE runs SET end_ns = ?, exit_code = ?, status = ?, result_json = coalesce(?, "
                           "result_json), error = ?, targets_json = coalesce(?, targets_json) WHERE run_id = ?",
                           [&](sql::Statement& st) {
                             st.bind(1, monotonic_ns())
                                 .bind(2, int64_t{end.exit_code})
                                 .bind(3, end.status)
                                 .bind(4, end.result_json)
                                 .bind(5, end.error)
                                 .bind(6, end.targets_json)
                                 .bind(7, run_id);
                           });
  if (s) s = insert_settings(db_, run_id, end.settings);
  if (s) s = txn->commit();
  if (!s) return storing(s, fmt::format("the end of run {}", run_id));
  // What a run wrote reaches the main file, where readers that cannot use the WAL see it.
  (void)db_.exec("PRAGMA wal_checkpoint(PASSIVE)");
  return {};
}

Status TraceDb::set_root_pid(int64_t run_id, pid_t pid) {
  return run_statement(db_, "UPDATE runs SET root_pid = ? WHERE run_id = ?",
                       [&](sql::Statement& st) { st.bind(1, int64_t{pid}).bind(2, run_id); });
}

Status TraceDb::set_sweep_phase(int64_t run_id, const std::string& phase) {
  return run_statement(db_, "UPDATE runs SET sweep_phase = ? WHERE run_id = ?",
                       [&](sql::Statement& st) { st.bind(1, phase).bind(2, run_id); });
}

Status TraceDb::add_workload_events(int64_t run_id, const std::vector<WorkloadEvent>& events) {
  auto txn = sql::Transaction::begin(db_.get());
  if (!txn) return txn.error();
  auto stmt =
      db_.prepare("INSERT INTO events(run_id, ts_ns, dur_ns, pid, tid, op, arg, stream, bytes) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!stmt) return stmt.error();
  for (const WorkloadEvent& e : events) {
    auto code = contract::op_code(e.op);
    if (!code || contract::kOps[*code].category != contract::category::kWorkload)
      return Error::failure(fmt::format("unknown workload op '{}'", e.op));
    Status s = stmt->bind(1, run_id)
                   .bind(2, static_cast<int64_t>(e.ts_ns))
                   .bind(3, static_cast<int64_t>(e.dur_ns))
                   .bind(4, int64_t{e.pid})
                   .bind(5, int64_t{e.tid})
                   .bind(6, int64_t{*code})
                   .bind(7, e.arg)
                   .bind(8, e.loader)
                   .bind(9, e.bytes)
                   .run();
    if (!s) return storing(s, fmt::format("the batch timings of run {}", run_id));
  }
  if (Status s = txn->commit(); !s) return storing(s, fmt::format("the batch timings of run {}", run_id));
  return {};
}

Status TraceDb::add_loaders(int64_t run_id, const std::vector<ObservedLoader>& loaders) {
  auto txn = sql::Transaction::begin(db_.get());
  if (!txn) return txn.error();
  auto stmt = db_.prepare(
      "INSERT OR REPLACE INTO loaders(run_id, pid, loader, knobs_json, overrides_json, epochs, batches, wait_ns, "
      "workers_json) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!stmt) return stmt.error();
  for (const ObservedLoader& l : loaders) {
    Status s = stmt->bind(1, run_id)
                   .bind(2, int64_t{l.pid})
                   .bind(3, int64_t{l.loader})
                   .bind(4, l.knobs_json)
                   .bind(5, l.overrides_json)
                   .bind(6, l.epochs)
                   .bind(7, l.batches)
                   .bind(8, static_cast<int64_t>(l.wait_ns))
                   .bind(9, nlohmann::json(l.workers).dump())
                   .run();
    if (!s) return storing(s, fmt::format("the DataLoaders of run {}", run_id));
  }
  if (Status s = txn->commit(); !s) return storing(s, fmt::format("the DataLoaders of run {}", run_id));
  return {};
}

namespace {

// In the caller's transaction.
Status insert_gpu_samples(const sql::Connection& db, int64_t run_id, const std::vector<GpuInfo>& gpus,
                          const std::vector<GpuSample>& samples) {
  auto gpu = db.prepare("INSERT OR REPLACE INTO gpus(run_id, gpu, name, uuid, pci_bus_id) VALUES(?, ?, ?, ?, ?)");
  if (!gpu) return gpu.error();
  for (const GpuInfo& g : gpus) {
    Status s = gpu->bind(1, run_id).bind(2, int64_t{g.index}).bind(3, g.name).bind(4, g.uuid).bind(5, g.pci_bus_id).run();
    if (!s) return s;
  }
  auto sample = db.prepare("INSERT INTO gpu_samples(run_id, gpu, ts_ns, metric, value) VALUES(?, ?, ?, ?, ?)");
  if (!sample) return sample.error();
  for (const GpuSample& g : samples) {
    Status s = sample->bind(1, run_id)
                   .bind(2, int64_t{g.gpu})
                   .bind(3, static_cast<int64_t>(g.ts_ns))
                   .bind(4, g.metric)
                   .bind(5, g.value)
                   .run();
    if (!s) return s;
  }
  return {};
}

// The CPU profile: frames, stacks and sample counts, and the stacks of the events that carry one.
Status insert_profile(const sql::Connection& db, int64_t run_id, const CpuProfile& profile) {
  auto frame = db.prepare(
      "INSERT INTO profile_frames(run_id, frame_id, kind, name, file, line, line_kind) VALUES(?, ?, ?, ?, ?, ?, ?)");
  if (!frame) return frame.error();
  for (size_t i = 0; i < profile.frames.size(); ++i) {
    const ProfileFrame& f = profile.frames[i];
    frame->bind(1, run_id).bind(2, static_cast<int64_t>(i + 1)).bind(3, f.kind).bind(4, f.name).bind(5, f.file);
    if (Status s = frame->bind(6, f.line).bind(7, f.line_kind).run(); !s) return s;
  }
  auto stack = db.prepare("INSERT INTO profile_stacks(run_id, stack_id, parent_id, frame_id) VALUES(?, ?, ?, ?)");
  if (!stack) return stack.error();
  for (size_t i = 0; i < profile.stacks.size(); ++i) {
    const ProfileStack& st = profile.stacks[i];
    if (Status s = stack->bind(1, run_id).bind(2, static_cast<int64_t>(i + 1)).bind(3, st.parent_id).bind(4, st.frame_id).run(); !s)
      return s;
  }
  auto sample =
      db.prepare("INSERT INTO profile_samples(run_id, tid, stack_id, bucket_ns, samples) VALUES(?, ?, ?, ?, ?)");
  if (!sample) return sample.error();
  for (const ProfileSampleCount& c : profile.samples) {
    Status s = sample->bind(1, run_id)
                   .bind(2, int64_t{c.tid})
                   .bind(3, c.stack_id)
                   .bind(4, static_cast<int64_t>(c.bucket_ns))
                   .bind(5, static_cast<int64_t>(c.samples))
                   .run();
    if (!s) return s;
  }
  // OR IGNORE: a second stack under one event's key (never expected) must not lose the run.
  auto event = db.prepare("INSERT OR IGNORE INTO event_stacks(run_id, tid, ts_ns, op, stack_id) VALUES(?, ?, ?, ?, ?)");
  if (!event) return event.error();
  for (const EventStack& e : profile.event_stacks) {
    Status s = event->bind(1, run_id)
                   .bind(2, int64_t{e.tid})
                   .bind(3, static_cast<int64_t>(e.ts_ns))
                   .bind(4, int64_t{e.op})
                   .bind(5, e.stack_id)
                   .run();
    if (!s) return s;
  }
  return {};
}

// In the caller's transaction. A sample's missing field is NULL.
Status insert_process_samples(const sql::Connection& db, int64_t run_id, const std::vector<ProcessSample>& samples) {
  auto row = db.prepare(
      "INSERT OR REPLACE INTO process_samples(run_id, pid, ts_ns, rss_bytes, pss_bytes, private_dirty_bytes, "
      "swap_bytes, fds, fd_limit, shm_size_bytes, shm_free_bytes, wchan) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!row) return row.error();
  for (const ProcessSample& p : samples) {
    row->bind(1, run_id).bind(2, int64_t{p.pid}).bind(3, static_cast<int64_t>(p.ts_ns));
    int column = 4;
    for (const std::optional<uint64_t>* v : {&p.rss_bytes, &p.pss_bytes, &p.private_dirty_bytes, &p.swap_bytes, &p.fds,
                                             &p.fd_limit, &p.shm_size_bytes, &p.shm_free_bytes}) {
      if (*v)
        row->bind(column, static_cast<int64_t>(**v));
      else
        row->bind_null(column);
      ++column;
    }
    row->bind(column, p.wchan);
    if (Status s = row->run(); !s) return s;
  }
  return {};
}

}  // namespace


namespace {

Status insert_threads(const sql::Connection& db, int64_t run_id, const std::vector<ThreadInfo>& threads) {
  auto insert = db.prepare(
      "INSERT OR REPLACE INTO threads(run_id, tid, pid, ppid, comm, role, rank, uid, start_ns, exit_ns, exit_code) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.error();
  auto optional = [](const auto& v) { return v ? std::optional<int64_t>(static_cast<int64_t>(*v)) : std::nullopt; };
  for (const ThreadInfo& t : threads) {
    insert->bind(1, run_id).bind(2, int64_t{t.tid}).bind(3, int64_t{t.pid}).bind(4, optional(t.ppid));
    insert->bind(5, t.comm).bind(6, t.role).bind(7, optional(t.rank)).bind(8, optional(t.uid));
    insert->bind(9, optional(t.start_ns)).bind(10, optional(t.exit_ns)).bind(11, optional(t.exit_code));
    if (Status s = insert->run(); !s) return s;
  }
  return {};
}

Status insert_thread_stats(const sql::Connection& db, int64_t run_id, const TraceTotals& totals) {
  auto insert = db.prepare(
      "INSERT OR REPLACE INTO thread_stats(run_id, tid, pid, voluntary_switches, involuntary_switches, oncpu_ns, "
      "offcpu_ns, offcpu_max_ns, runq_count, runq_ns, page_allocs, page_alloc_bytes, page_faults, io_count, "
      "io_bytes, io_ns, iowait_count, iowait_ns, cache_pages_added) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.error();
  for (const auto& [tid, s] : totals.thread_stats) {
    const uint64_t values[] = {s.voluntary_switches, s.involuntary_switches, s.oncpu_ns,   s.offcpu_ns,
                               s.offcpu_max_ns,      s.runq_count,           s.runq_ns,    s.page_allocs,
                               s.page_alloc_bytes,   s.page_faults,          s.io_count,   s.io_bytes,
                               s.io_ns,              s.iowait_count,         s.iowait_ns,  s.cache_pages_added};
    insert->bind(1, run_id).bind(2, int64_t{tid}).bind(3, int64_t{s.pid});
    for (size_t i = 0; i < std::size(values); ++i) insert->bind(4 + static_cast<int>(i), int64_t(values[i]));
    if (Status st = insert->run(); !st) return st;
  }
  return {};
}

template <class Key, class Hist, size_t Slots>
Status insert_histograms(sql::Statement& insert, int64_t run_id, const std::vector<std::pair<Key, Hist>>& rows,
                         const std::function<void(sql::Statement&, const Key&)>& bind_key) {
  for (const auto& [key, hist] : rows) {
    for (size_t slot = 0; slot < Slots; ++slot) {
      if (!hist.slots[slot]) continue;
      insert.bind(1, run_id);
      bind_key(insert, key);
      insert.bind(4, int64_t(slot)).bind(5, int64_t(hist.slots[slot]));
      if (Status s = insert.run(); !s) return s;
    }
  }
  return {};
}

Status insert_call_stats(const sql::Connection& db, int64_t run_id, const TraceTotals& totals) {
  auto insert = db.prepare(
      "INSERT OR REPLACE INTO call_stats(run_id, tid, pid, op, calls, returns, errors, total_ns, max_ns, bytes, "
      "streamed, cut_calls) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.error();
  for (const auto& [key, s] : totals.call_stats) {
    insert->bind(1, run_id).bind(2, int64_t{key.tid}).bind(3, int64_t{s.pid}).bind(4, int64_t{key.op});
    const uint64_t values[] = {s.calls, s.returns, s.errors, s.total_ns, s.max_ns, s.bytes, s.streamed, s.cut};
    for (size_t i = 0; i < std::size(values); ++i) insert->bind(5 + static_cast<int>(i), int64_t(values[i]));
    if (Status st = insert->run(); !st) return st;
  }
  auto hist = db.prepare("INSERT OR REPLACE INTO call_histograms(run_id, pid, op, slot, count) VALUES(?, ?, ?, ?, ?)");
  if (!hist) return hist.error();
  return insert_histograms<ib_call_hist_key, ib_call_hist, IB_CALL_HIST_SLOTS>(
      *hist, run_id, totals.call_histograms, [](sql::Statement& st, const ib_call_hist_key& key) {
        st.bind(2, int64_t{key.pid}).bind(3, int64_t{key.op});
      });
}

// Each window the estimate of one sampled function was computed from, in order.
Status insert_sampling_windows(sql::Statement& insert, int64_t run_id, const SampledFunction& f) {
  const std::vector<SampleWindow>& windows = f.calls.windows;
  for (size_t i = 0; i < windows.size(); ++i) {
    const SampleWindow& w = windows[i];
    insert.bind(1, run_id).bind(2, int64_t{f.pid}).bind(3, int64_t{f.op}).bind(4, int64_t(i));
    insert.bind(5, int64_t(w.start_ns)).bind(6, int64_t(w.end_ns)).bind(7, int64_t(w.calls)).bind(8, w.trapped_share);
    const auto callers = [&](auto field) {
      return w.callers ? std::optional<int64_t>(int64_t(field(*w.callers))) : std::nullopt;
    };
    insert.bind(9, callers([](const CallerTime& c) { return c.gap_before_ns; }));
    insert.bind(10, callers([](const CallerTime& c) { return c.window_ns; }));
    insert.bind(11, callers([](const CallerTime& c) { return c.calls; }));
    insert.bind(12, w.callers ? std::optional<double>(w.callers->trapped_ns) : std::nullopt);
    insert.bind(13, callers([](const CallerTime& c) { return c.counted_in_gaps; }));
    const bool timed = w.return_program.runs > 0;
    insert.bind(14, timed ? std::optional<int64_t>(int64_t(w.return_program.runs)) : std::nullopt);
    insert.bind(15, timed ? std::optional<int64_t>(int64_t(w.return_program.ns)) : std::nullopt);
    if (Status st = insert.run(); !st) return st;
  }
  return {};
}

// A duty-cycled function's windows and estimate per process (pid 0: every process).
Status insert_call_sampling(const sql::Connection& db, int64_t run_id, const TraceTotals& totals) {
  auto window = db.prepare(
      "INSERT OR REPLACE INTO call_sampling_windows(run_id, pid, op, seq, start_ns, end_ns, calls, trapped_share, "
      "callers_gap_before_ns, callers_window_ns, callers_calls, callers_trapped_ns, counted_in_gaps, "
      "return_program_runs, return_program_ns) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!window) return window.error();
  auto insert = db.prepare(
      "INSERT OR REPLACE INTO call_sampling(run_id, pid, op, since_ns, until_ns, windows, attached_ns, "
      "probed_calls, estimated_calls, estimated_low, estimated_high, rate_clock, trap_cost_scale) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.error();
  for (const SampledFunction& f : totals.sampled) {
    const SampledCalls& c = f.calls;
    insert->bind(1, run_id).bind(2, int64_t{f.pid}).bind(3, int64_t{f.op});
    insert->bind(4, int64_t(c.since_ns)).bind(5, int64_t(c.until_ns)).bind(6, int64_t(c.windows.size()));
    insert->bind(7, int64_t(c.attached_ns())).bind(8, int64_t(c.probed_calls()));
    insert->bind(9, int64_t(std::llround(f.estimate.calls))).bind(10, int64_t(std::llround(f.estimate.low)));
    insert->bind(11, std::isfinite(f.estimate.high) ? std::optional<int64_t>(int64_t(std::llround(f.estimate.high)))
                                                    : std::nullopt);
    insert->bind(12, std::string(f.estimate.on_cpu_clock ? contract::rate_clock::kOnCpu : contract::rate_clock::kWall));
    insert->bind(13, f.estimate.trap_cost_scale);
    if (Status st = insert->run(); !st) return st;
    if (Status st = insert_sampling_windows(*window, run_id, f); !st) return st;
  }
  return {};
}

Status insert_metric_histograms(const sql::Connection& db, int64_t run_id, const TraceTotals& totals) {
  auto insert = db.prepare("INSERT OR REPLACE INTO histograms(run_id, pid, metric, slot, count) VALUES(?, ?, ?, ?, ?)");
  if (!insert) return insert.error();
  std::vector<std::pair<ib_hist_key, ib_hist>> known;
  for (const auto& row : totals.histograms)
    if (row.first.metric < IB_HIST_COUNT) known.push_back(row);
  return insert_histograms<ib_hist_key, ib_hist, IB_HIST_SLOTS>(
      *insert, run_id, known, [](sql::Statement& st, const ib_hist_key& key) {
        st.bind(2, int64_t{key.pid}).bind(3, std::string_view(contract::kHistogramMetrics[key.metric]));
      });
}

Status insert_losses_and_settings(const sql::Connection& db, int64_t run_id, const TraceTotals& totals) {
  auto loss = db.prepare("INSERT OR REPLACE INTO losses(run_id, source, dropped, offered) VALUES(?, ?, ?, ?)");
  if (!loss) return loss.error();
  for (const TraceLoss& row : totals.losses) {
    loss->bind(1, run_id).bind(2, row.source).bind(3, int64_t(row.dropped));
    loss->bind(4, row.offered ? std::optional<int64_t>(int64_t(*row.offered)) : std::nullopt);
    if (Status s = loss->run(); !s) return s;
  }
  std::vector<std::pair<std::string, std::string>> settings = totals.settings;
  for (size_t i = 0; i < totals.problems.size(); ++i)
    settings.emplace_back(fmt::format("trace_problem_{}", i + 1), totals.problems[i]);
  return insert_settings(db, run_id, settings);
}

std::string cuda_probes_json(const TraceTotals& totals) {
  nlohmann::json libraries = nlohmann::json::array();
  for (const ProbedLibrary& lib : totals.libraries)
    libraries.push_back({{"path", lib.path}, {"kind", lib.kind}, {"attached", lib.attached}, {"missing", lib.missing}});
  return nlohmann::json{{"traced", totals.calls_traced()}, {"detail", totals.cuda_detail}, {"libraries", libraries}}
      .dump();
}

}  // namespace

Status TraceDb::write_totals(int64_t run_id, const TraceTotals& totals) {
  auto txn = sql::Transaction::begin(db_.get());
  Status s = txn ? Status() : Status(txn.error());
  if (s) s = insert_threads(db_, run_id, totals.threads);
  if (s) s = insert_thread_stats(db_, run_id, totals);
  if (s) s = insert_call_stats(db_, run_id, totals);
  if (s) s = insert_call_sampling(db_, run_id, totals);
  if (s) s = insert_metric_histograms(db_, run_id, totals);
  if (s) s = insert_losses_and_settings(db_, run_id, totals);
  if (s) s = insert_gpu_samples(db_, run_id, totals.gpus, totals.gpu_samples);
  if (s) s = insert_profile(db_, run_id, totals.profile);
  if (s) s = insert_process_samples(db_, run_id, totals.process_samples);
  if (s)
    s = run_statement(db_, "UPDATE runs SET cuda_probes = ? WHERE run_id = ?",
                      [&](sql::Statement& st) { st.bind(1, cuda_probes_json(totals)).bind(2, run_id); });
  if (s) s = txn->commit();
  if (!s) return storing(s, fmt::format("the trace totals of run {}", run_id));
  return {};
}

Result<int64_t> TraceDb::begin_sweep(const SweepStart& start) {
  const Harness harness = this_harness();
  Status s = run_statement(db_,
                           "INSERT INTO sweeps(started_unix, status, request_json, rules_json, node, harness_pid, "
                           "harness_start) VALUES(?, 'running', ?, ?, ?, ?, ?)",
                           [&](sql::Statement& st) {
                             st.bind(1, unix_now_s())
                                 .bind(2, start.request_json)
                                 .bind(3, start.rules_json)
                                 .bind(4, hostname())
                                 .bind(5, harness.pid)
                                 .bind(6, harness.start);
                           });
  if (!s) return storing(s, "the new sweep");
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_.get()));
}

Status TraceDb::put_sweep_point(int64_t sweep_id, const SweepPointRow& p) {
  Status s = run_statement(db_,
                           "INSERT OR REPLACE INTO sweep_points(sweep_id, point, position, config_json, state, reason, "
                           "cause) VALUES(?, ?, ?, ?, ?, ?, ?)",
                           [&](sql::Statement& st) {
                             st.bind(1, sweep_id)
                                 .bind(2, p.point)
                                 .bind(3, int64_t{p.position})
                                 .bind(4, p.config_json)
                                 .bind(5, p.state)
                                 .bind(6, p.reason.empty() ? std::nullopt : std::optional<std::string>(p.reason))
                                 .bind(7, p.cause.empty() ? std::nullopt : std::optional<std::string>(p.cause));
                           });
  if (!s) return storing(s, fmt::format("sweep point '{}'", p.point));
  return {};
}

Status TraceDb::finish_sweep(int64_t sweep_id, const std::string& status, const std::optional<std::string>& baseline,
                             const std::optional<std::string>& recommended) {
  Status s = run_statement(db_,
                           "UPDATE sweeps SET ended_unix = ?, status = ?, baseline_point = coalesce(?, baseline_point), "
                           "recommended_point = ? WHERE sweep_id = ?",
                           [&](sql::Statement& st) {
                             st.bind(1, unix_now_s()).bind(2, status).bind(3, baseline).bind(4, recommended).bind(5, sweep_id);
                           });
  if (!s) return storing(s, fmt::format("the end of sweep {}", sweep_id));
  return {};
}

Status TraceDb::resume_sweep(int64_t sweep_id, const std::string& expected_status) {
  const Harness harness = this_harness();
  auto tx = sql::Transaction::begin(db_.get());  // BEGIN IMMEDIATE: one claimant at a time
  if (!tx) return storing(tx.error(), fmt::format("the resumption of sweep {}", sweep_id));
  Status s = run_statement(db_,
                           "UPDATE sweeps SET status = 'running', ended_unix = NULL, harness_pid = ?, "
                           "harness_start = ? WHERE sweep_id = ? AND status = ?",
                           [&](sql::Statement& st) {
                             st.bind(1, harness.pid).bind(2, harness.start).bind(3, sweep_id).bind(4, expected_status);
                           });
  if (!s) return storing(s, fmt::format("the resumption of sweep {}", sweep_id));
  if (sqlite3_changes(db_.get()) == 0) {
    std::string now = "gone";
    std::optional<int64_t> owner;
    if (auto row = db_.prepare("SELECT status, harness_pid FROM sweeps WHERE sweep_id = ?"); row) {
      row->bind(1, sweep_id);
      if (auto found = row->step(); found && *found) {
        now = row->column_text(0);
        owner = row->column_optional_int(1);
      }
    }
    if (now == contract::sweep_status::kRunning)
      return Error::bad_input(
          fmt::format("sweep {} in {} is already being resumed by another ingero-bench process{}", sweep_id,
                      db_.path(), owner ? fmt::format(" (pid {})", *owner) : ""),
          "wait for that one to finish, or stop it first; one sweep is resumed by one process at a time");
    return Error::bad_input(
        fmt::format("sweep {} in {} changed while this resume started (its status is now '{}', not '{}')", sweep_id,
                    db_.path(), now, expected_status),
        fmt::format("run ingero-bench sweep --resume {} --db {} again", sweep_id, db_.path()));
  }
  if (Status c = tx->commit(); !c) return storing(c, fmt::format("the resumption of sweep {}", sweep_id));
  return {};
}

// ---- EventTable ---------------------------------------------------------------------

Result<EventTable> EventTable::open(const std::string& path, int64_t run_id) {
  auto db = open_for_writing(path);
  if (!db) return db.error();
  // A large page cache keeps the two event indexes in memory during a run. Without
  // syncs during the run (WAL: a crash of this process still leaves a consistent
  // file); sync() makes it durable once at the end.
  if (Status s = db->exec("PRAGMA cache_size = -65536; PRAGMA synchronous = OFF"); !s) return s.error();
  auto insert_event = db->prepare(
      "INSERT INTO events(run_id, ts_ns, dur_ns, pid, tid, op, ret, bytes, arg, stream) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  auto insert_batch = db->prepare("INSERT INTO event_batches(run_id, seq, count, records) VALUES(?, ?, ?, ?)");
  auto select_batch = db->prepare("SELECT records FROM event_batches WHERE run_id = ? AND seq = ?");
  auto delete_batch = db->prepare("DELETE FROM event_batches WHERE run_id = ? AND seq = ?");
  for (auto* stmt : {&insert_event, &insert_batch, &select_batch, &delete_batch})
    if (!*stmt) return stmt->error();
  Statements statements{std::move(*insert_event), std::move(*insert_batch), std::move(*select_batch),
                        std::move(*delete_batch)};
  return EventTable(std::move(*db), std::move(statements), run_id);
}

Status EventTable::insert_rows(const EventRecord* records, size_t count) {
  sql::Statement& insert = sql_.insert_event;
  auto optional_int = [&](int index, bool present, int64_t value) {
    present ? insert.bind(index, value) : insert.bind_null(index);
  };
  for (const EventRecord* e = records; e != records + count; ++e) {
    insert.bind(1, run_id_)
        .bind(2, static_cast<int64_t>(e->ts_ns))
        .bind(3, static_cast<int64_t>(e->dur_ns))
        .bind(4, int64_t{e->pid})
        .bind(5, int64_t{e->tid})
        .bind(6, int64_t{e->op});
    optional_int(7, e->flags & IB_EVENT_HAS_RET, e->ret);
    optional_int(8, e->flags & IB_EVENT_HAS_BYTES, static_cast<int64_t>(e->bytes));
    optional_int(9, e->flags & IB_EVENT_HAS_ARG, e->arg);
    optional_int(10, e->flags & IB_EVENT_HAS_STREAM, static_cast<int64_t>(e->stream));
    if (Status s = insert.run(); !s) return s;
  }
  return {};
}

Status EventTable::insert(const EventRecord* records, size_t count) {
  auto txn = sql::Transaction::begin(db_.get());
  if (!txn) return txn.error();
  if (Status s = insert_rows(records, count); !s) return s;
  return txn->commit();
}

Status EventTable::stage(const EventRecord* records, size_t count, int64_t first_seq, size_t per_batch) {
  auto txn = sql::Transaction::begin(db_.get());
  if (!txn) return txn.error();
  int64_t seq = first_seq;
  for (size_t first = 0; first < count; first += per_batch, ++seq) {
    const size_t n = std::min(per_batch, count - first);
    Status s = sql_.insert_batch.bind(1, run_id_)
                   .bind(2, seq)
                   .bind(3, static_cast<int64_t>(n))
                   .bind_blob(4, records + first, n * sizeof(EventRecord))
                   .run();
    if (!s) return s;
  }
  return txn->commit();
}

Status EventTable::unstage(int64_t seq, size_t count) {
  std::vector<EventRecord> records(count);
  const size_t expected = records.size() * sizeof(EventRecord);
  sql::Statement& select = sql_.select_batch;
  select.bind(1, run_id_).bind(2, seq);
  auto row = select.step();
  std::optional<size_t> found;  // the batch's size in bytes, when it is there
  if (row.ok() && *row) {
    found = select.column_bytes(0);
    if (*found == expected) memcpy(records.data(), select.column_blob(0), expected);
  }
  select.reset();
  if (!row) return row.error();
  // A missing or resized batch is not zero-filled into events: its events are lost, and counted.
  if (!found)
    return Error::failure(fmt::format("staged event batch {} of run {} is missing: its {} events are lost", seq,
                                      run_id_, count));
  if (*found != expected)
    return Error::failure(fmt::format("staged event batch {} of run {} holds {} bytes, not the {} of its {} events: "
                                      "they are lost",
                                      seq, run_id_, *found, expected, count));
  // Moving rows and deleting the batch in one transaction: a batch is never in both tables.
  auto txn = sql::Transaction::begin(db_.get());
  if (!txn) return txn.error();
  if (Status s = insert_rows(records.data(), records.size()); !s) return s;
  if (Status s = sql_.delete_batch.bind(1, run_id_).bind(2, seq).run(); !s) return s;
  return txn->commit();
}

Status EventTable::sync() { return db_.exec("PRAGMA synchronous = NORMAL; PRAGMA wal_checkpoint(PASSIVE)"); }

Result<uint64_t> EventTable::used_bytes() {
  auto pages = db_.query_int("PRAGMA page_count");
  auto free_pages = db_.query_int("PRAGMA freelist_count");
  auto page_size = db_.query_int("PRAGMA page_size");
  for (auto* r : {&pages, &free_pages, &page_size})
    if (!*r) return r->error();
  const int64_t used = pages->value_or(0) - free_pages->value_or(0);
  return static_cast<uint64_t>(std::max<int64_t>(used, 0) * page_size->value_or(0));
}

Status EventTable::bound_log(uint64_t max_bytes) {
  auto page_size = db_.query_int("PRAGMA page_size");
  if (!page_size) return page_size.error();
  const uint64_t pages = std::max<uint64_t>(max_bytes / static_cast<uint64_t>(page_size->value_or(4096)), 16);
  return db_.exec(fmt::format("PRAGMA wal_autocheckpoint = {}; PRAGMA journal_size_limit = {}", pages, max_bytes));
}

Result<uint64_t> EventTable::drop_before(uint64_t ts_ns) {
  auto txn = sql::Transaction::begin(db_.get());
  if (!txn) return txn.error();
  auto events = db_.prepare("DELETE FROM events WHERE run_id = ? AND ts_ns < ?");
  if (!events) return events.error();
  if (Status s = events->bind(1, run_id_).bind(2, static_cast<int64_t>(ts_ns)).run(); !s) return s.error();
  const auto deleted = static_cast<uint64_t>(sqlite3_changes(db_.get()));
  auto stacks = db_.prepare("DELETE FROM event_stacks WHERE run_id = ? AND ts_ns < ?");
  if (!stacks) return stacks.error();
  if (Status s = stacks->bind(1, run_id_).bind(2, static_cast<int64_t>(ts_ns)).run(); !s) return s.error();
  if (Status s = txn->commit(); !s) return s.error();
  return deleted;
}

}  // namespace ingero::tracer

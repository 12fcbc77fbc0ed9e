// SPDX-License-Identifier: Apache-2.0
#include "tests/reports/trace_fixture.h"

#include <cstdio>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/trace_contract.h"
#include "common/trace_schema.h"

namespace ingero::reports::testing {
namespace {

bool is_library_call(int code) {
  for (const contract::OpInfo& op : contract::kOps)
    if (op.code == code) return contract::is_library_call_category(op.category);
  return false;
}

}  // namespace

TraceFixture::TraceFixture(sql::Connection db) : db_(std::move(db)) {}

void TraceFixture::check(bool ok, const std::string& what) const {
  if (!ok) throw std::runtime_error(what + ": " + db_.last_error());
}

std::unique_ptr<TraceFixture> TraceFixture::create(const std::string& path) {
  std::remove(path.c_str());
  std::remove((path + "-wal").c_str());
  std::remove((path + "-shm").c_str());
  auto db = sql::open(path, sql::Mode::read_write, 5000);
  if (!db) throw std::runtime_error(db.error().message);
  std::unique_ptr<TraceFixture> fixture(new TraceFixture(std::move(db.value())));
  auto& self = *fixture;
  // Fixtures are rebuilt by every test: durability would only cost fsyncs.
  self.check(self.db_.exec("PRAGMA synchronous = OFF").ok(), "synchronous");
  if (Status s = schema::create_or_upgrade(self.db_); !s) throw std::runtime_error(s.error().message);
  auto insert_event = self.db_.prepare(
      "INSERT INTO events(run_id, ts_ns, dur_ns, pid, tid, op, ret, bytes, arg) "
      "VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)");
  self.check(insert_event.ok(), "prepare events");
  self.insert_event_ = std::move(insert_event.value());
  auto count_call = self.db_.prepare(
      "INSERT INTO call_stats(run_id, tid, pid, op, calls, returns, errors, total_ns, max_ns, bytes, streamed) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?5, 0, ?5 * ?6, ?6, ?7, ?8) ON CONFLICT(run_id, tid, op) DO UPDATE SET "
      "calls = calls + ?5, returns = returns + ?5, total_ns = total_ns + ?5 * ?6, max_ns = max(max_ns, ?6), "
      "bytes = bytes + ?7, streamed = streamed + ?8");
  self.check(count_call.ok(), "prepare call_stats");
  self.count_call_ = std::move(count_call.value());
  auto count_histogram = self.db_.prepare(
      "INSERT INTO call_histograms(run_id, pid, op, slot, count) VALUES (?1, ?2, ?3, ?4, ?5) "
      "ON CONFLICT(run_id, pid, op, slot) DO UPDATE SET count = count + ?5");
  self.check(count_histogram.ok(), "prepare call_histograms");
  self.count_histogram_ = std::move(count_histogram.value());
  return fixture;
}

int TraceFixture::op_code(const std::string& name) const {
  auto code = contract::op_code(name);
  if (!code || *code == IB_OP_NONE) throw std::runtime_error("op " + name + " is not in the trace contract");
  return *code;
}

int64_t TraceFixture::add_run(const RunSpec& run) {
  auto stmt = db_.prepare(
      "INSERT INTO runs(label, kind, command_json, config_json, result_json, machine_json, "
      "started_unix, start_ns, end_ns, root_pid, exit_code, status, traced, sweep_id, sweep_point, sweep_phase, node) "
      "VALUES (?, ?, '[\"ingero-bench\"]', ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)");
  check(stmt.ok(), "prepare run");
  stmt->bind(1, run.label).bind(2, run.kind).bind(3, run.config_json).bind(4, run.result_json);
  stmt->bind(5, run.machine_json).bind(6, run.started_unix).bind(7, run.start_ns).bind(8, run.end_ns);
  stmt->bind(9, run.root_pid).bind(10, run.status).bind(11, int64_t{run.traced ? 1 : 0});
  stmt->bind(12, run.sweep_id).bind(13, run.sweep_point).bind(14, run.sweep_phase).bind(15, run.node);
  check(stmt->run().ok(), "insert run");
  return *db_.query_int("SELECT last_insert_rowid()").value();
}

void TraceFixture::add_thread(int64_t run_id, const ThreadRecord& thread) {
  auto stmt = db_.prepare(
      "INSERT INTO threads(run_id, tid, pid, ppid, comm, role, start_ns, exit_ns, rank, exit_code) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  check(stmt.ok(), "prepare thread");
  stmt->bind(1, run_id).bind(2, thread.tid).bind(3, thread.pid);
  stmt->bind(4, thread.ppid).bind(5, thread.comm).bind(6, thread.role);
  stmt->bind(7, thread.start_ns).bind(8, thread.exit_ns).bind(9, thread.rank).bind(10, thread.exit_code);
  check(stmt->run().ok(), "insert thread");
}

void TraceFixture::add_thread_stats(int64_t run_id, const ThreadStatsRecord& stats) {
  auto stmt = db_.prepare(
      "INSERT INTO thread_stats(run_id, tid, pid, voluntary_switches, involuntary_switches, oncpu_ns, offcpu_ns, "
      "offcpu_max_ns, runq_count, runq_ns, page_allocs, page_alloc_bytes, page_faults, io_count, io_bytes, io_ns, "
      "iowait_count, iowait_ns, cache_pages_added) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  check(stmt.ok(), "prepare thread_stats");
  const ThreadCounters& c = stats.counters;
  stmt->bind(1, run_id).bind(2, stats.tid).bind(3, stats.pid).bind(4, c.voluntary_switches);
  stmt->bind(5, c.involuntary_switches).bind(6, c.oncpu_ns).bind(7, c.offcpu_ns);
  stmt->bind(8, c.offcpu_max_ns).bind(9, c.runq_count).bind(10, c.runq_ns);
  stmt->bind(11, c.page_allocs).bind(12, c.page_alloc_bytes).bind(13, c.page_faults);
  stmt->bind(14, c.io_count).bind(15, c.io_bytes).bind(16, c.io_ns);
  stmt->bind(17, c.iowait_count).bind(18, c.iowait_ns).bind(19, c.cache_pages_added);
  check(stmt->run().ok(), "insert thread_stats");
}

void TraceFixture::add_histogram(int64_t run_id, int64_t pid, const std::string& metric, int slot,
                                 int64_t count) {
  auto stmt = db_.prepare("INSERT INTO histograms VALUES (?, ?, ?, ?, ?)");
  check(stmt.ok(), "prepare histogram");
  stmt->bind(1, run_id).bind(2, pid).bind(3, metric).bind(4, int64_t{slot}).bind(5, count);
  check(stmt->run().ok(), "insert histogram");
}

void TraceFixture::set_setting(int64_t run_id, const std::string& key, const std::string& value) {
  auto stmt = db_.prepare("INSERT OR REPLACE INTO run_settings VALUES (?, ?, ?)");
  check(stmt.ok(), "prepare setting");
  stmt->bind(1, run_id).bind(2, key).bind(3, value);
  check(stmt->run().ok(), "insert setting");
}

void TraceFixture::add_profile_frame(int64_t run_id, int64_t frame_id, const ProfileFrame& frame) {
  auto stmt = db_.prepare("INSERT INTO profile_frames VALUES (?, ?, ?, ?, ?, ?, ?)");
  check(stmt.ok(), "prepare profile frame");
  const auto text_or_null = [](const std::string& s) { return s.empty() ? std::nullopt : std::optional(s); };
  stmt->bind(1, run_id).bind(2, frame_id).bind(3, frame.kind).bind(4, frame.name).bind(5, text_or_null(frame.file));
  stmt->bind(6, frame.line).bind(7, text_or_null(frame.line_kind));
  check(stmt->run().ok(), "insert profile frame");
}

void TraceFixture::add_profile_stack(int64_t run_id, int64_t stack_id, std::optional<int64_t> parent_id,
                                     int64_t frame_id) {
  auto stmt = db_.prepare("INSERT INTO profile_stacks VALUES (?, ?, ?, ?)");
  check(stmt.ok(), "prepare profile stack");
  stmt->bind(1, run_id).bind(2, stack_id).bind(3, parent_id).bind(4, frame_id);
  check(stmt->run().ok(), "insert profile stack");
}

void TraceFixture::add_profile_samples(int64_t run_id, int64_t tid, int64_t stack_id, int64_t bucket_ns,
                                       int64_t samples) {
  auto stmt = db_.prepare(
      "INSERT INTO profile_samples VALUES (?, ?, ?, ?, ?) ON CONFLICT(run_id, tid, stack_id, bucket_ns) DO UPDATE SET samples = samples + excluded.samples");
  check(stmt.ok(), "prepare profile samples");
  stmt->bind(1, run_id).bind(2, tid).bind(3, stack_id).bind(4, bucket_ns).bind(5, samples);
  check(stmt->run().ok(), "insert profile samples");
}

void TraceFixture::add_event_stack(int64_t run_id, int64_t tid, int64_t ts_ns, const std::string& op,
                                   int64_t stack_id) {
  auto stmt = db_.prepare(
      "INSERT INTO event_stacks(run_id, tid, ts_ns, op, stack_id) SELECT ?, ?, ?, op, ? FROM ops WHERE name = ?");
  check(stmt.ok(), "prepare event stack");
  stmt->bind(1, run_id).bind(2, tid).bind(3, ts_ns).bind(4, stack_id).bind(5, op);
  check(stmt->run().ok(), "insert event stack");
}

void TraceFixture::add_loss(int64_t run_id, const std::string& source, int64_t dropped) {
  auto stmt = db_.prepare("INSERT OR REPLACE INTO losses(run_id, source, dropped) VALUES (?, ?, ?)");
  check(stmt.ok(), "prepare loss");
  stmt->bind(1, run_id).bind(2, source).bind(3, dropped);
  check(stmt->run().ok(), "insert loss");
}

void TraceFixture::add_event(int64_t run_id, const std::string& op, int64_t ts_ns, int64_t dur_ns,
                             int64_t pid, int64_t tid, std::optional<int64_t> bytes,
                             std::optional<int64_t> arg) {
  auto& stmt = insert_event_;
  stmt.bind(1, run_id).bind(2, ts_ns).bind(3, dur_ns).bind(4, pid).bind(5, tid);
  stmt.bind(6, int64_t{op_code(op)});
  stmt.bind(7, bytes).bind(8, arg);
  check(stmt.run().ok(), "insert event");
  const int code = op_code(op);
  if (is_library_call(code)) count_call(run_id, code, pid, tid, 1, dur_ns, bytes, true);
}

void TraceFixture::add_unstored_calls(int64_t run_id, const std::string& op, int64_t pid, int64_t tid,
                                      int64_t calls, int64_t each_ns) {
  count_call(run_id, op_code(op), pid, tid, calls, each_ns, std::nullopt, false);
}

void TraceFixture::count_call(int64_t run_id, int op, int64_t pid, int64_t tid, int64_t calls, int64_t each_ns,
                              std::optional<int64_t> bytes, bool stored) {
  auto& stats = count_call_;
  stats.bind(1, run_id).bind(2, tid).bind(3, pid).bind(4, int64_t{op}).bind(5, calls).bind(6, each_ns);
  stats.bind(7, bytes.value_or(0)).bind(8, stored ? calls : int64_t{0});
  check(stats.run().ok(), "count call");
  int slot = 0;
  while (slot < IB_CALL_HIST_SLOTS - 1 && (int64_t{2} << slot) <= each_ns) ++slot;
  auto& hist = count_histogram_;
  hist.bind(1, run_id).bind(2, pid).bind(3, int64_t{op}).bind(4, int64_t{slot}).bind(5, calls);
  check(hist.run().ok(), "count call histogram");
}

void TraceFixture::begin() { check(db_.exec("BEGIN").ok(), "begin"); }
void TraceFixture::commit() { check(db_.exec("COMMIT").ok(), "commit"); }

}  // namespace ingero::reports::testing

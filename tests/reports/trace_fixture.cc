#include "tests/reports/trace_fixture.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace ingero::reports::testing {
namespace {

struct OpSpec {
  const char* name;
  const char* category;
};

// The op names the schema documents; codes are arbitrary on purpose, the
// analysis must resolve names through the ops table.
const std::vector<OpSpec>& known_ops() {
  static const std::vector<OpSpec> ops = {
      {"cudaMalloc", "cuda_runtime"},        {"cudaFree", "cuda_runtime"},
      {"cudaMallocHost", "cuda_runtime"},    {"cudaHostAlloc", "cuda_runtime"},
      {"cudaFreeHost", "cuda_runtime"},      {"cudaHostRegister", "cuda_runtime"},
      {"cudaMemcpy", "cuda_runtime"},        {"cudaMemcpyAsync", "cuda_runtime"},
      {"cudaMemsetAsync", "cuda_runtime"},   {"cudaLaunchKernel", "cuda_runtime"},
      {"cudaStreamSynchronize", "cuda_runtime"}, {"cudaDeviceSynchronize", "cuda_runtime"},
      {"cudaEventSynchronize", "cuda_runtime"},  {"cudaStreamWaitEvent", "cuda_runtime"},
      {"cuLaunchKernel", "cuda_driver"},     {"cuMemAlloc_v2", "cuda_driver"},
      {"cuMemFree_v2", "cuda_driver"},       {"cuMemcpyHtoDAsync_v2", "cuda_driver"},
      {"cuMemcpyAsync", "cuda_driver"},      {"cuStreamSynchronize", "cuda_driver"},
      {"cuCtxSynchronize", "cuda_driver"},   {"cuMemHostAlloc", "cuda_driver"},
      {"offcpu_preempted", "sched"},         {"offcpu_blocked", "sched"},
      {"runq_wait", "sched"},                {"page_fault", "mm"},
      {"block_io", "io"},                    {"fork", "process"},
      {"exec", "process"},                   {"exit", "process"},
      {"batch_wait", "workload"},            {"batch_compute", "workload"},
  };
  return ops;
}

std::string read_schema() {
  std::ifstream in(INGERO_SCHEMA_SQL);
  if (!in) throw std::runtime_error(std::string("cannot read schema ") + INGERO_SCHEMA_SQL);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
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
  auto db = open_database(path, sql::Mode::read_write);
  if (!db) throw std::runtime_error(db.error().message);
  std::unique_ptr<TraceFixture> fixture(new TraceFixture(std::move(db.value())));
  auto& self = *fixture;
  // Fixtures are rebuilt by every test: durability would only cost fsyncs.
  self.check(self.db_.exec("PRAGMA synchronous = OFF").ok(), "synchronous");
  self.check(self.db_.exec(read_schema()).ok(), "schema");
  self.check(self.db_.exec("PRAGMA user_version = 1").ok(), "user_version");
  auto insert_op = self.db_.prepare("INSERT INTO ops(op, name, category) VALUES (?, ?, ?)");
  self.check(insert_op.ok(), "prepare ops");
  int code = 3;
  for (const auto& op : known_ops()) {
    code += 2;
    insert_op->bind(1, int64_t{code}).bind(2, op.name).bind(3, op.category);
    self.check(insert_op->run().ok(), "insert op");
    self.op_codes_[op.name] = code;
  }
  auto insert_event = self.db_.prepare(
      "INSERT INTO events(run_id, ts_ns, dur_ns, pid, tid, op, ret, bytes, arg) "
      "VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)");
  self.check(insert_event.ok(), "prepare events");
  self.insert_event_ = std::move(insert_event.value());
  return fixture;
}

int TraceFixture::op_code(const std::string& name) const {
  auto it = op_codes_.find(name);
  if (it == op_codes_.end()) throw std::runtime_error("unknown op " + name);
  return it->second;
}

int64_t TraceFixture::add_run(const RunSpec& run) {
  auto stmt = db_.prepare(
      "INSERT INTO runs(label, kind, command_json, config_json, result_json, machine_json, "
      "started_unix, start_ns, end_ns, root_pid, exit_code, status, traced) "
      "VALUES (?, ?, '[\"ingero-bench\"]', ?, ?, ?, 1.7e9, ?, ?, ?, 0, ?, ?)");
  check(stmt.ok(), "prepare run");
  stmt->bind(1, run.label).bind(2, run.kind).bind(3, run.config_json).bind(4, run.result_json);
  stmt->bind(5, run.machine_json).bind(6, run.start_ns).bind(7, run.end_ns);
  stmt->bind(8, run.root_pid).bind(9, run.status).bind(10, int64_t{run.traced ? 1 : 0});
  check(stmt->run().ok(), "insert run");
  return *db_.query_int("SELECT last_insert_rowid()").value();
}

void TraceFixture::add_thread(int64_t run_id, const ThreadRecord& thread) {
  auto stmt = db_.prepare(
      "INSERT INTO threads(run_id, tid, pid, ppid, comm, role, start_ns, exit_ns) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  check(stmt.ok(), "prepare thread");
  stmt->bind(1, run_id).bind(2, thread.tid).bind(3, thread.pid);
  stmt->bind(4, thread.ppid).bind(5, thread.comm).bind(6, thread.role);
  stmt->bind(7, thread.start_ns).bind(8, thread.exit_ns);
  check(stmt->run().ok(), "insert thread");
}

void TraceFixture::add_thread_stats(int64_t run_id, const ThreadStatsRecord& stats) {
  auto stmt = db_.prepare(
      "INSERT INTO thread_stats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0)");
  check(stmt.ok(), "prepare thread_stats");
  const ThreadCounters& c = stats.counters;
  stmt->bind(1, run_id).bind(2, stats.tid).bind(3, stats.pid).bind(4, c.voluntary_switches);
  stmt->bind(5, c.involuntary_switches).bind(6, c.oncpu_ns).bind(7, c.offcpu_ns);
  stmt->bind(8, c.offcpu_max_ns).bind(9, c.runq_count).bind(10, c.runq_ns);
  stmt->bind(11, c.page_allocs).bind(12, c.page_alloc_bytes).bind(13, c.page_faults);
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
}

void TraceFixture::begin() { check(db_.exec("BEGIN").ok(), "begin"); }
void TraceFixture::commit() { check(db_.exec("COMMIT").ok(), "commit"); }

}  // namespace ingero::reports::testing

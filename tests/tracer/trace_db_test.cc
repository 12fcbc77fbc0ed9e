// The trace DB and the writer thread without BPF: schema, version checks, run rows,
// batched event writes, queue overflow accounting, and the decoding helpers.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/sqlite.h"
#include "tracer/cuda_probes.h"
#include "tracer/event_writer.h"
#include "tracer/ops.h"
#include "tracer/threads.h"
#include "tracer/trace_db.h"

namespace ingero::tracer {
namespace {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/ingero-tracer-test-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

int64_t query_int(sqlite3* db, const std::string& sql) {
  auto stmt = sql::Statement::prepare(db, sql);
  EXPECT_TRUE(stmt.ok()) << sql;
  auto row = stmt->step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return stmt->column_int(0);
}

ib_event fixture_event(uint64_t i) {
  ib_event e{};
  e.ts_ns = 1000 + i;
  e.dur_ns = 10;
  e.pid = 42;
  e.tid = 43;
  e.op = IB_OP_CUDA_MEMCPY_ASYNC;
  e.ret = 0;
  e.bytes = 4096;
  e.arg = 1;
  e.stream = 7;
  e.flags = IB_EVENT_HAS_RET | IB_EVENT_HAS_BYTES | IB_EVENT_HAS_ARG | IB_EVENT_HAS_STREAM;
  return e;
}

TEST(TraceDb, CreatesSchemaWithVersionAndOps) {
  TempDir dir;
  auto db = TraceDb::open(dir.file("sub/dir/trace.db"));
  ASSERT_TRUE(db.ok()) << db.error().message;
  sqlite3* h = (*db)->handle();
  EXPECT_EQ(query_int(h, "PRAGMA user_version"), kSchemaVersion);
  for (const char* table : {"runs", "ops", "events", "threads", "thread_stats", "histograms", "losses", "run_settings"})
    EXPECT_EQ(query_int(h, std::string("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='") + table +
                               "'"),
              1)
        << table;
  EXPECT_EQ(query_int(h, "SELECT op FROM ops WHERE name='cudaMemcpyAsync' AND category='cuda_runtime'"),
            IB_OP_CUDA_MEMCPY_ASYNC);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM ops WHERE name IN ('batch_wait','batch_compute','offcpu_preempted',"
                         "'offcpu_blocked','runq_wait','page_fault','block_io','fork','exec','exit',"
                         "'cuLaunchKernel','cuMemHostAlloc')"),
            12);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode='wal'"), 1);
  // Opening again keeps the data.
  auto again = TraceDb::open(dir.file("sub/dir/trace.db"));
  ASSERT_TRUE(again.ok()) << again.error().message;
}

TEST(TraceDb, RejectsAnotherSchemaVersion) {
  TempDir dir;
  std::string path = dir.file("old.db");
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    sql::Connection db(raw);
    ASSERT_TRUE(sql::exec(db.get(), "CREATE TABLE runs(x); PRAGMA user_version = 7").ok());
  }
  auto db = TraceDb::open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().exit_code, kExitBadInput);
  EXPECT_NE(db.error().message.find("schema version 7"), std::string::npos) << db.error().message;
}

TEST(TraceDb, RejectsNonDatabaseAndForeignDatabase) {
  TempDir dir;
  std::string text = dir.file("notes.txt");
  std::ofstream(text) << "this is not a database, just some text that is long enough to be read as a header\n";
  auto db = TraceDb::open(text);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().exit_code, kExitBadInput);
  EXPECT_NE(db.error().message.find("not a SQLite database"), std::string::npos) << db.error().message;

  std::string foreign = dir.file("foreign.db");
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(foreign.c_str(), &raw), SQLITE_OK);
    sql::Connection c(raw);
    ASSERT_TRUE(sql::exec(c.get(), "CREATE TABLE customers(id)").ok());
  }
  auto other = TraceDb::open(foreign);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().exit_code, kExitBadInput);
  EXPECT_NE(other.error().message.find("not an ingero-bench trace DB"), std::string::npos) << other.error().message;
}

TEST(TraceDb, RunLifeCycleAndWorkloadEvents) {
  TempDir dir;
  auto db = TraceDb::open(dir.file("t.db"));
  ASSERT_TRUE(db.ok());
  RunStart start{"loader w4", "workload", {"ingero-bench", "--workload", "x"}, std::string("{}"), "{\"cpu\":1}"};
  auto run = (*db)->begin_run(start);
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_TRUE((*db)->set_root_pid(*run, 1234).ok());
  ASSERT_TRUE((*db)->set_setting(*run, "offcpu_min_ns", "100000").ok());
  std::vector<WorkloadEvent> events = {{"batch_wait", 10, 5, 1234, 1234, 0}, {"batch_compute", 15, 7, 1234, 1234, 0}};
  ASSERT_TRUE((*db)->add_workload_events(*run, events).ok());
  EXPECT_FALSE((*db)->add_workload_events(*run, {{"cudaMalloc", 1, 1, 1, 1, 0}}).ok());
  ASSERT_TRUE((*db)->finish_run(*run, RunEnd{0, "ok", std::string("{\"version\":1}")}).ok());

  sqlite3* h = (*db)->handle();
  std::string where = " WHERE run_id=" + std::to_string(*run);
  EXPECT_EQ(query_int(h, "SELECT root_pid FROM runs" + where), 1234);
  EXPECT_EQ(query_int(h, "SELECT status='ok' AND end_ns >= start_ns AND command_json LIKE '[\"ingero-bench\"%' "
                         "FROM runs" + where),
            1);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM events e JOIN ops o USING(op)" + where +
                             " AND o.category='workload'"),
            2);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM run_settings" + where), 1);
}

TEST(EventWriter, WritesBatchesWithNullsForAbsentFields) {
  TempDir dir;
  std::string path = dir.file("w.db");
  auto writer = EventWriter::start(path, 1, 1u << 20);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  constexpr uint64_t kEvents = 200'000;
  for (uint64_t i = 0; i < kEvents; ++i) {
    ib_event e = fixture_event(i);
    if (i % 2) e.flags = IB_EVENT_HAS_RET;  // no bytes, arg, stream
    ASSERT_TRUE((*writer)->push(e));
  }
  ASSERT_TRUE((*writer)->finish().ok());
  EXPECT_EQ((*writer)->written(), kEvents);
  EXPECT_EQ((*writer)->dropped(), 0u);
  sqlite3* h = (*writer)->connection();
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM events WHERE run_id=1"), int64_t(kEvents));
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM events WHERE bytes IS NULL AND arg IS NULL AND stream IS NULL"),
            int64_t(kEvents / 2));
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM events WHERE bytes=4096 AND arg=1 AND stream=7 AND ret=0"),
            int64_t(kEvents / 2));
}

TEST(EventWriter, FullQueueDropsAndCounts) {
  TempDir dir;
  std::string path = dir.file("q.db");
  auto blocker_db = open_trace_db(path);
  ASSERT_TRUE(blocker_db.ok());
  auto writer = EventWriter::start(path, 1, 100);
  ASSERT_TRUE(writer.ok());
  // Another connection holds the write lock, so the writer thread stalls and the queue fills.
  ASSERT_TRUE(sql::exec(blocker_db->get(), "BEGIN IMMEDIATE").ok());
  constexpr uint64_t kPushed = 10'000;
  uint64_t accepted = 0;
  for (uint64_t i = 0; i < kPushed; ++i) {
    accepted += (*writer)->push(fixture_event(i));
    if (i == 10) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // writer takes a first batch
  }
  ASSERT_TRUE(sql::exec(blocker_db->get(), "COMMIT").ok());
  ASSERT_TRUE((*writer)->finish().ok());
  EXPECT_GT((*writer)->dropped(), 0u);
  EXPECT_LE(accepted, 100u + 11u);
  EXPECT_EQ((*writer)->written() + (*writer)->dropped(), kPushed);
  EXPECT_EQ(query_int((*writer)->connection(), "SELECT count(*) FROM events"), int64_t((*writer)->written()));
}

TEST(Decoding, ThreadRolesExitCodesAndMaps) {
  EXPECT_EQ(thread_role(10, "ib-worker-3", 1), "worker");
  EXPECT_EQ(thread_role(10, "pt_data_worker", 1), "worker");
  EXPECT_EQ(thread_role(10, "ib-pin", 1), "pin");
  EXPECT_EQ(thread_role(10, "pt_data_pin", 1), "pin");
  EXPECT_EQ(thread_role(1, "python3", 1), "main");
  EXPECT_EQ(thread_role(11, "python3", 1), "other");
  EXPECT_EQ(exit_code_from_status(3 << 8), 3);
  EXPECT_EQ(exit_code_from_status(9), 137);
  EXPECT_EQ(exit_code_from_status(0), 0);

  std::string maps =
      "7f0000000000-7f0000001000 r-xp 00000000 08:01 123 /opt/venv/nvidia/cu13/lib/libcudart.so.13\n"
      "7f0000001000-7f0000002000 r--p 00001000 08:01 123 /opt/venv/nvidia/cu13/lib/libcudart.so.13\n"
      "7f0000003000-7f0000004000 r-xp 00000000 08:01 124 /usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06\n"
      "7f0000005000-7f0000006000 r-xp 00000000 08:01 125 /usr/lib/libcudnn.so.9\n"
      "7f0000007000-7f0000008000 rw-p 00000000 00:00 0 [heap]\n"
      "7f0000009000-7f000000a000 r-xp 00000000 08:01 126 /tmp/libcudart.so.12 (deleted)\n";
  auto libs = cuda_libraries_in_maps(maps);
  ASSERT_EQ(libs.size(), 2u);
  EXPECT_EQ(libs[0], "/opt/venv/nvidia/cu13/lib/libcudart.so.13");
  EXPECT_EQ(libs[1], "/usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06");
  EXPECT_EQ(classify_cuda_library("/x/libcudart.so.13"), CudaLibrary::runtime);
  EXPECT_EQ(classify_cuda_library("/x/libcuda.so.1"), CudaLibrary::driver);
  EXPECT_FALSE(classify_cuda_library("/x/libcudnn.so.9").has_value());

  ThreadTable table;
  ib_event fork{};
  fork.op = IB_OP_FORK;
  fork.pid = 100;
  fork.tid = 100;
  fork.arg = 200;
  fork.ts_ns = 5;
  strcpy(fork.comm, "child");
  table.apply(fork);
  ib_event rename{};
  rename.op = IB_OP_RENAME;
  rename.pid = 200;
  rename.tid = 200;
  strcpy(rename.comm, "ib-worker-0");
  table.apply(rename);
  const ThreadInfo& child = table.threads().at(200);
  EXPECT_EQ(child.pid, 200);
  EXPECT_EQ(child.ppid, 100);
  EXPECT_EQ(child.comm, "ib-worker-0");
  EXPECT_EQ(child.start_ns, 5u);
}

TEST(Ops, CodesMatchNamesFromTheSharedHeader) {
  EXPECT_EQ(op_name(IB_OP_CUDA_LAUNCH_KERNEL), "cudaLaunchKernel");
  EXPECT_EQ(op_code("cuMemcpyHtoDAsync_v2"), IB_OP_CU_MEMCPY_HTOD_ASYNC);
  for (const CudaProbeSpec& spec : cuda_probe_specs()) {
    uint64_t cookie = cuda_probe_cookie(spec);
    EXPECT_EQ(IB_COOKIE_OP(cookie), spec.op);
    EXPECT_EQ(IB_COOKIE_STREAM_SRC(cookie), spec.stream_src);
  }
}

}  // namespace
}  // namespace ingero::tracer

// SPDX-License-Identifier: Apache-2.0
// The trace DB and the writer thread without BPF: schema, version checks, run rows,
// batched event writes, queue overflow accounting, and the decoding helpers.
#include <gtest/gtest.h>

#include <map>
#include <sqlite3.h>
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/sqlite.h"
#include "tracer/cuda_probes.h"
#include "tracer/event_writer.h"
#include "common/proc_files.h"
#include "common/trace_contract.h"
#include "common/wait_status.h"
#include "tracer/threads.h"
#include "tests/common/temp_dir.h"
#include "tracer/trace_db.h"

namespace ingero::tracer {
namespace {

using ingero::testing::TempDir;

int64_t query_int(sqlite3* db, const std::string& sql) {
  auto stmt = sql::Statement::prepare(db, sql);
  EXPECT_TRUE(stmt.ok()) << sql;
  auto row = stmt->step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return stmt->column_int(0);
}

sql::Connection reader(const std::string& path) {
  auto db = sql::open(path, sql::Mode::read_only, 5000);
  EXPECT_TRUE(db.ok()) << path;
  return db ? std::move(*db) : sql::Connection();
}

RunStart command_run(const std::string& label) {
  RunStart start;
  start.label = label;
  start.kind = std::string(contract::kind::kCommand);
  start.command = {"test"};
  start.machine_json = "{}";
  return start;
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

TEST(TraceDb, CreatesSchemaWithVersionAndEveryOpOfTheContract) {
  TempDir dir;
  auto db = TraceDb::open(dir.file("sub/dir/trace.db"));
  ASSERT_TRUE(db.ok()) << db.error().message;
  sqlite3* h = db->connection().get();
  EXPECT_EQ(query_int(h, "PRAGMA user_version"), contract::kSchemaVersion);
  for (const char* table : {"runs", "ops", "events", "threads", "thread_stats", "histograms", "losses", "run_settings",
                            "call_stats", "call_histograms", "sweeps", "sweep_points"})
    EXPECT_EQ(query_int(h, std::string("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='") + table +
                               "'"),
              1)
        << table;
  for (const contract::OpInfo& op : contract::kOps) {
    if (op.code == IB_OP_NONE) continue;  // never written
    EXPECT_EQ(query_int(h, fmt::format("SELECT count(*) FROM ops WHERE op = {} AND name = '{}' AND category = '{}'",
                                       op.code, op.name, op.category)),
              1)
        << op.name;
  }
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM ops"), int64_t(std::size(contract::kOps)) - 1);
  // Two writers at once (harness and writer thread) need WAL while the file is open.
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode='wal'"), 1);
  auto again = TraceDb::open(dir.file("sub/dir/trace.db"));
  ASSERT_TRUE(again.ok()) << again.error().message;
}

// A file of this schema made older: created at `path`, then `older_sql` run on it (which drops what
// the later versions added and sets user_version). Returns the file reopened, which upgrades it.
Result<TraceDb> reopened_after(const std::string& path, const char* older_sql) {
  {
    auto db = TraceDb::open(path);
    if (!db) return db.error();
  }
  {
    auto raw = sql::open(path, sql::Mode::read_write, 5000);
    if (!raw) return raw.error();
    if (Status s = raw->exec(older_sql); !s) return s.error();
  }
  return TraceDb::open(path);
}

// A run whose totals hold one duty-cycled function, written to `db`: its probed calls on one thread,
// 3 of them cut by the windows' edges.
Status write_sampled_run(TraceDb& db, uint32_t pid, uint16_t op, std::vector<SampleWindow> windows,
                         CallEstimate estimate) {
  TraceTotals totals;
  ib_call_stats probed{};
  probed.pid = pid;
  probed.calls = static_cast<uint64_t>(estimate.low);
  probed.returns = probed.calls - 3;
  probed.cut = 3;
  totals.call_stats.push_back({ib_call_key{pid, op}, probed});
  SampledFunction sampled;
  sampled.pid = pid;
  sampled.op = op;
  sampled.calls.windows = std::move(windows);
  sampled.estimate = estimate;
  totals.sampled.push_back(sampled);
  auto run = db.begin_run(command_run("sampled"));
  if (!run) return run.error();
  return db.write_totals(*run, totals);
}

// A version-5 file (call_sampling without rate_clock, no call_sampling_windows) is upgraded in place
// when a run is added to it: its rows are kept, their clock unknown (NULL), and new rows say theirs.
TEST(TraceDb, AVersion5FileGainsTheSamplingClockAndKeepsItsRows) {
  TempDir dir;
  auto db = reopened_after(dir.file("v5.db"),
                           "ALTER TABLE call_sampling DROP COLUMN rate_clock;"
                           "ALTER TABLE call_sampling DROP COLUMN trap_cost_scale;"
                           "DROP TABLE call_sampling_windows;"
                           "ALTER TABLE call_stats DROP COLUMN cut_calls; ALTER TABLE sweep_points DROP COLUMN cause;"
                           "INSERT INTO call_sampling VALUES(1, 42, 1, 0, 10, 2, 1, 5, 50, 40, 60);"
                           "PRAGMA user_version = 5");
  ASSERT_TRUE(db.ok()) << db.error().message;
  sqlite3* h = db->connection().get();
  EXPECT_EQ(query_int(h, "PRAGMA user_version"), contract::kSchemaVersion);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_sampling WHERE pid = 42 AND estimated_calls = 50 AND "
                         "rate_clock IS NULL"),
            1);
  ASSERT_TRUE(write_sampled_run(*db, 7, IB_OP_CUDA_EVENT_RECORD, {}, {100, 90, 110, true, std::nullopt}).ok());
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_sampling WHERE pid = 7 AND rate_clock = 'on_cpu'"), 1);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_sampling_windows"), 0);
}

// A version-7 file (no trap cost scale, windows without the return probe's program time) is
// upgraded in place: its rows are kept with those unknown (NULL), and new rows say theirs.
TEST(TraceDb, AVersion7FileGainsTheTrapCostScaleAndKeepsItsWindows) {
  TempDir dir;
  auto db = reopened_after(dir.file("v7.db"),
                           "ALTER TABLE call_sampling DROP COLUMN trap_cost_scale;"
                           "ALTER TABLE call_sampling_windows DROP COLUMN return_program_runs;"
                           "ALTER TABLE call_sampling_windows DROP COLUMN return_program_ns;"
                           "ALTER TABLE call_stats DROP COLUMN cut_calls; ALTER TABLE sweep_points DROP COLUMN cause;"
                           "INSERT INTO call_sampling VALUES(1, 42, 1, 0, 10, 2, 1, 5, 50, 40, 60, 'on_cpu');"
                           "INSERT INTO call_sampling_windows VALUES(1, 42, 1, 0, 1, 2, 3, 0.1, 4, 5, 3, 6.5, 0);"
                           "PRAGMA user_version = 7");
  ASSERT_TRUE(db.ok()) << db.error().message;
  sqlite3* h = db->connection().get();
  EXPECT_EQ(query_int(h, "PRAGMA user_version"), contract::kSchemaVersion);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_sampling WHERE pid = 42 AND trap_cost_scale IS NULL"), 1);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_sampling_windows WHERE pid = 42 AND calls = 3 AND "
                         "return_program_runs IS NULL AND return_program_ns IS NULL"),
            1);
  ASSERT_TRUE(write_sampled_run(*db, 7, IB_OP_CU_LAUNCH_KERNEL, {{1'000, 6'000, 40, 0.25, std::nullopt, {41, 5'330}}},
                                {100, 90, 110, true, 1.25})
                  .ok());
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_sampling WHERE pid = 7 AND trap_cost_scale = 1.25"), 1);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_sampling_windows WHERE pid = 7 AND return_program_runs = 41 "
                         "AND return_program_ns = 5330"),
            1);
}

// A version-8 file (call_stats without cut_calls) is upgraded in place: its rows keep an unknown (NULL)
// cut count, and new rows say theirs.
TEST(TraceDb, AVersion8FileGainsTheCutCallsAndKeepsItsTotals) {
  TempDir dir;
  auto db = reopened_after(dir.file("v8.db"),
                           "ALTER TABLE call_stats DROP COLUMN cut_calls; ALTER TABLE sweep_points DROP COLUMN cause;"
                           "INSERT INTO call_stats VALUES(1, 42, 42, 1, 10, 9, 0, 900, 200, 0, 9);"
                           "PRAGMA user_version = 8");
  ASSERT_TRUE(db.ok()) << db.error().message;
  sqlite3* h = db->connection().get();
  EXPECT_EQ(query_int(h, "PRAGMA user_version"), contract::kSchemaVersion);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_stats WHERE tid = 42 AND calls = 10 AND cut_calls IS NULL"), 1);
  ASSERT_TRUE(write_sampled_run(*db, 7, IB_OP_CUDA_EVENT_RECORD, {}, {100, 90, 110, true, std::nullopt}).ok());
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_stats WHERE pid = 7 AND cut_calls = 3"), 1);
}

// A version-9 file gains the profile and process-sample tables, empty, and the sweep points' cause
// (NULL in its rows: readers derive it from the reason), and keeps its rows.
TEST(TraceDb, AVersion9FileGainsTheProfileAndProcessSampleTables) {
  TempDir dir;
  auto db = reopened_after(dir.file("v9.db"),
                           "DROP TABLE profile_frames; DROP TABLE profile_stacks; DROP TABLE profile_samples;"
                           "DROP TABLE process_samples; ALTER TABLE sweep_points DROP COLUMN cause;"
                           "INSERT INTO call_stats VALUES(1, 42, 42, 1, 10, 9, 0, 900, 200, 0, 9, 1);"
                           "INSERT INTO sweep_points VALUES(1, 'w8', 1, '{}', 'skipped', "
                           "'the budget of 1m00s was reached before the search came to it');"
                           "PRAGMA user_version = 9");
  ASSERT_TRUE(db.ok()) << db.error().message;
  sqlite3* h = db->connection().get();
  EXPECT_EQ(query_int(h, "PRAGMA user_version"), contract::kSchemaVersion);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_stats WHERE tid = 42 AND cut_calls = 1"), 1);
  for (const char* table : {"profile_frames", "profile_stacks", "profile_samples", "process_samples"})
    EXPECT_EQ(query_int(h, std::string("SELECT count(*) FROM ") + table), 0) << table;
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM sweep_points WHERE point = 'w8' AND cause IS NULL"), 1);
  ASSERT_TRUE(db->put_sweep_point(1, {"w16", 2, "{}", "skipped", "past the budget", "budget"}));
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM sweep_points WHERE point = 'w16' AND cause = 'budget'"), 1);
}

// A version-10 file gains the events' stacks table, empty, and keeps its profile.
TEST(TraceDb, AVersion10FileGainsTheEventStacksTable) {
  TempDir dir;
  auto db = reopened_after(dir.file("v10.db"),
                           "DROP TABLE event_stacks;"
                           "INSERT INTO profile_frames VALUES(1, 1, 'native', 'spin', NULL, NULL, NULL);"
                           "PRAGMA user_version = 10");
  ASSERT_TRUE(db.ok()) << db.error().message;
  sqlite3* h = db->connection().get();
  EXPECT_EQ(query_int(h, "PRAGMA user_version"), contract::kSchemaVersion);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM event_stacks"), 0);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM profile_frames WHERE name = 'spin'"), 1);
}

// Every window an estimate was computed from is stored in order, with its callers' on-CPU time
// where it was read and NULL where it was not.
TEST(TraceDb, EachSampledWindowIsStoredWithItsCallersTime) {
  TempDir dir;
  auto db = TraceDb::open(dir.file("t.db"));
  ASSERT_TRUE(db.ok()) << db.error().message;
  ASSERT_TRUE(write_sampled_run(*db, 9, IB_OP_CU_LAUNCH_KERNEL,
                                {{1'000, 6'000, 40, 0.25, CallerTime{45'000, 4'800, 38, 1'200.5, 2}, {}},
                                 {51'000, 56'000, 30, 0.2, std::nullopt, {}}},
                                {700, 600, 800, false, std::nullopt})
                  .ok());
  sqlite3* h = db->connection().get();
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_sampling_windows WHERE seq = 0 AND pid = 9 AND start_ns = 1000 "
                         "AND end_ns = 6000 AND calls = 40 AND trapped_share = 0.25 AND callers_gap_before_ns = 45000 "
                         "AND callers_window_ns = 4800 AND callers_calls = 38 AND callers_trapped_ns = 1200.5 "
                         "AND counted_in_gaps = 2"),
            1);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_sampling_windows WHERE seq = 1 AND start_ns = 51000 AND calls = 30 "
                         "AND callers_window_ns IS NULL AND callers_calls IS NULL AND counted_in_gaps IS NULL"),
            1);
  // Neither window's return probe was timed, and the estimate kept the calibrated cost.
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_sampling_windows WHERE return_program_runs IS NULL"), 2);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM call_sampling WHERE pid = 9 AND trap_cost_scale IS NULL"), 1);
  EXPECT_EQ(query_int(h, "SELECT windows FROM call_sampling WHERE pid = 9"), 2);
}

// A reader that cannot write the directory cannot create -shm: the closed file must not
// be left in WAL mode.
TEST(TraceDb, ClosedFileIsInRollbackJournalModeWithNoSideFiles) {
  TempDir dir;
  const std::string path = dir.file("t.db");
  {
    auto db = TraceDb::open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->begin_run(command_run("x")).ok());
  }
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
  auto db = sql::open(path, sql::Mode::immutable, 0);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(query_int(db->get(), "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode='delete'"), 1);
  EXPECT_EQ(query_int(db->get(), "SELECT count(*) FROM runs"), 1);
}

TEST(TraceDb, RejectsAnotherSchemaVersion) {
  TempDir dir;
  std::string path = dir.file("old.db");
  {
    auto db = sql::open(path, sql::Mode::read_write, 0);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec("CREATE TABLE runs(x); PRAGMA user_version = 99").ok());
  }
  auto db = TraceDb::open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().exit_code, kExitBadInput);
  EXPECT_NE(db.error().message.find("schema version 99"), std::string::npos) << db.error().message;
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
    auto c = sql::open(foreign, sql::Mode::read_write, 0);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c->exec("CREATE TABLE customers(id)").ok());
  }
  auto other = TraceDb::open(foreign);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().exit_code, kExitBadInput);
  EXPECT_NE(other.error().message.find("not an ingero-bench trace DB"), std::string::npos) << other.error().message;
}

// Runs were once appended to a file SQLite itself finds damaged.
TEST(TraceDb, ADamagedDbIsNotAppendedTo) {
  TempDir dir;
  const std::string path = dir.file("t.db");
  {
    auto db = TraceDb::open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->begin_run(command_run("one")).ok());
  }
  ASSERT_TRUE(TraceDb::open(path).ok());  // intact: opened again
  // Garbage over the third page (a table's root; page 1 holds the schema SQLite reads at open).
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  unsigned char size[2];
  file.seekg(16);
  file.read(reinterpret_cast<char*>(size), 2);
  const int page = size[0] << 8 | size[1];
  file.seekp(2 * page);
  const std::string garbage(static_cast<size_t>(page), '\xa5');
  file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  file.close();
  auto damaged = TraceDb::open(path);
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.error().exit_code, kExitBadInput);
  EXPECT_NE(damaged.error().message.find(path), std::string::npos) << damaged.error().message;
  EXPECT_NE(damaged.error().message.find("damaged"), std::string::npos) << damaged.error().message;
  EXPECT_NE(damaged.error().hint.find("pass a new --db"), std::string::npos) << damaged.error().hint;
}

TEST(TraceDb, RunLifeCycleAndWorkloadEvents) {
  TempDir dir;
  auto db = TraceDb::open(dir.file("t.db"));
  ASSERT_TRUE(db.ok());
  RunStart start = command_run("loader w4");
  start.kind = std::string(contract::kind::kWorkload);
  start.command = {"ingero-bench", "--workload", "x"};
  start.config_json = "{}";
  auto run = db->begin_run(start);
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_TRUE(db->set_root_pid(*run, 1234).ok());
  std::vector<WorkloadEvent> events = {{"batch_wait", 10, 5, 1234, 1234, 0, std::nullopt, std::nullopt},
                                       {"batch_compute", 15, 7, 1234, 1234, 0, std::nullopt, std::nullopt},
                                       {"worker_start", 2, 3, 1300, 1300, 0, std::nullopt, std::nullopt}};
  ASSERT_TRUE(db->add_workload_events(*run, events).ok());
  auto foreign_op = db->add_workload_events(*run, {{"cudaMalloc", 1, 1, 1, 1, 0, std::nullopt, std::nullopt}});
  ASSERT_FALSE(foreign_op.ok());
  RunEnd end;
  end.status = "ok";
  end.result_json = "{\"version\":1}";
  ASSERT_TRUE(db->finish_run(*run, end).ok());

  sqlite3* h = db->connection().get();
  std::string where = " WHERE run_id=" + std::to_string(*run);
  EXPECT_EQ(query_int(h, "SELECT root_pid FROM runs" + where), 1234);
  EXPECT_EQ(query_int(h, "SELECT status='ok' AND end_ns >= start_ns AND command_json LIKE '[\"ingero-bench\"%' "
                         "AND harness_pid = " + std::to_string(getpid()) + " AND node IS NOT NULL FROM runs" + where),
            1);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM events e JOIN ops o USING(op)" + where +
                             " AND o.category='workload'"),
            3);
}

// The run of an ingero-bench that died (kill -9, crash) is abandoned as soon as another
// one opens the DB; a run whose harness still lives is left alone.
TEST(TraceDb, RunsAndSweepsOfADeadHarnessAreMarkedAbandoned) {
  TempDir dir;
  const std::string path = dir.file("t.db");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto db = TraceDb::open(path);
    if (!db || !db->begin_run(command_run("killed")).ok()) _exit(1);
    if (!db->begin_sweep({"{}", "{}"}).ok()) _exit(1);
    _exit(0);  // no finish_run: as if killed
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_EQ(shell_exit_code(status), 0);

  auto db = TraceDb::open(path);
  ASSERT_TRUE(db.ok()) << db.error().message;
  auto mine = db->begin_run(command_run("alive"));
  ASSERT_TRUE(mine.ok());
  auto again = TraceDb::open(path);  // a second writer while this one's run is going on
  ASSERT_TRUE(again.ok());
  sqlite3* h = again->connection().get();
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM runs WHERE label='killed' AND status='abandoned' AND end_ns IS NULL "
                         "AND error LIKE '%died%'"),
            1);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM sweeps WHERE status='abandoned'"), 1);
  EXPECT_EQ(query_int(h, "SELECT status='running' FROM runs WHERE run_id=" + std::to_string(*mine)), 1);
}

// Two `sweep --resume` at once: the first claims the sweep, the second is refused naming it
// (both once ran the whole sweep).
TEST(TraceDb, AnInterruptedSweepIsResumedByOneProcessOnly) {
  TempDir dir;
  const std::string path = dir.file("t.db");
  auto first = TraceDb::open(path);
  ASSERT_TRUE(first.ok());
  auto sweep = first->begin_sweep({"{}", "{}"});
  ASSERT_TRUE(sweep.ok());
  ASSERT_TRUE(first->finish_sweep(*sweep, "interrupted", std::nullopt, std::nullopt).ok());
  auto second = TraceDb::open(path);  // both read 'interrupted' before either claims it
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(first->resume_sweep(*sweep, "interrupted").ok());
  const Status lost = second->resume_sweep(*sweep, "interrupted");
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.error().exit_code, kExitBadInput);
  EXPECT_NE(lost.error().message.find(fmt::format("sweep {}", *sweep)), std::string::npos) << lost.error().message;
  EXPECT_NE(lost.error().message.find("already being resumed"), std::string::npos) << lost.error().message;
  EXPECT_NE(lost.error().message.find(fmt::format("pid {}", getpid())), std::string::npos) << lost.error().message;
  // Finished meanwhile: a resume that read the old status is refused too, and says so.
  ASSERT_TRUE(first->finish_sweep(*sweep, "done", std::nullopt, std::nullopt).ok());
  const Status stale = second->resume_sweep(*sweep, "interrupted");
  ASSERT_FALSE(stale.ok());
  EXPECT_NE(stale.error().message.find("now 'done'"), std::string::npos) << stale.error().message;
  sqlite3* h = second->connection().get();
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM sweeps WHERE status = 'done'"), 1);
}

// The writer takes only a regular file or a new path: a symlink (dangling: root would create
// the file it names), a device (a block device reports size 0 and was overwritten; /dev/null
// left a world-writable /dev/null-journal) or a FIFO is refused before SQLite opens it.
TEST(TraceDb, OpensOnlyARegularFileOrANewPath) {
  TempDir dir;
  const std::string dangling = dir.file("dangling.db");
  std::filesystem::create_symlink(dir.file("elsewhere.db"), dangling);
  auto db = TraceDb::open(dangling);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().exit_code, kExitBadInput);
  EXPECT_NE(db.error().message.find("symbolic link"), std::string::npos) << db.error().message;
  EXPECT_FALSE(std::filesystem::exists(dir.file("elsewhere.db")));

  const std::string fifo = dir.file("pipe.db");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto on_fifo = TraceDb::open(fifo);
  ASSERT_FALSE(on_fifo.ok());
  EXPECT_NE(on_fifo.error().message.find("a FIFO"), std::string::npos) << on_fifo.error().message;

  if (geteuid() == 0) {
    const std::string device = dir.file("null");
    ASSERT_EQ(mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
    auto on_device = TraceDb::open(device);
    ASSERT_FALSE(on_device.ok());
    EXPECT_EQ(on_device.error().exit_code, kExitBadInput);
    EXPECT_NE(on_device.error().message.find("a character device"), std::string::npos) << on_device.error().message;
    EXPECT_FALSE(std::filesystem::exists(device + "-journal"));
  }

  // A folder on the way that is a link: SQLite's NOFOLLOW refuses it, and the fix names the real path.
  std::filesystem::create_directory(dir.file("real"));
  std::filesystem::create_directory_symlink(dir.file("real"), dir.file("linked"));
  auto through = TraceDb::open(dir.file("linked/t.db"));
  ASSERT_FALSE(through.ok());
  EXPECT_NE(through.error().message.find("symbolic link"), std::string::npos) << through.error().message;
  EXPECT_NE(through.error().hint.find(dir.file("real/t.db")), std::string::npos) << through.error().hint;
  EXPECT_FALSE(std::filesystem::exists(dir.file("real/t.db")));
}

// One node's DB: a sweep with one finished run holding a batch and a CUDA call.
void write_node_db(const std::string& path, const std::string& label) {
  auto db = TraceDb::open(path);
  ASSERT_TRUE(db.ok());
  auto sweep = db->begin_sweep({"{}", "{}"});
  ASSERT_TRUE(sweep.ok());
  RunStart start = command_run(label);
  start.sweep_id = *sweep;
  auto run = db->begin_run(start);
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(db->add_workload_events(*run, {{"batch_wait", 10, 5, 7, 7, 0, std::nullopt, std::nullopt}}).ok());
  RunEnd end;
  end.status = "ok";
  ASSERT_TRUE(db->finish_run(*run, end).ok());
  ASSERT_TRUE(db->finish_sweep(*sweep, "done", std::nullopt, std::nullopt).ok());
  ASSERT_TRUE(db->connection()
                  .exec("INSERT INTO events(run_id, ts_ns, dur_ns, pid, tid, op) SELECT " + std::to_string(*run) +
                        ", 20, 3, 7, 7, op FROM ops WHERE name = 'cudaLaunchKernel'")
                  .ok());
  ASSERT_TRUE(db->connection()
                  .exec(fmt::format("INSERT INTO profile_frames VALUES({0}, 1, 'python', 'step', 'train.py', 42, "
                                    "'executing');"
                                    "INSERT INTO profile_stacks VALUES({0}, 1, NULL, 1);"
                                    "INSERT INTO profile_samples VALUES({0}, 7, 1, 0, 3);"
                                    "INSERT INTO process_samples(run_id, pid, ts_ns, rss_bytes) VALUES({0}, 7, 5, 4096);"
                                    "INSERT INTO event_stacks SELECT {0}, 7, 20, op, 1 FROM ops "
                                    "WHERE name = 'cudaLaunchKernel'",
                                    *run))
                  .ok());
  ASSERT_TRUE(db->connection().exec("UPDATE runs SET node = NULL").ok());  // as an older file would have it
}

// merge: two nodes' runs in one file under new ids, each with its node; ops are matched by
// name, so a file whose op codes differ still means the same calls.
TEST(TraceDb, ImportCopiesRunsUnderNewIdsWithTheirNodeAndOpsByName) {
  TempDir dir;
  write_node_db(dir.file("node-a.db"), "on a");
  write_node_db(dir.file("node-b.db"), "on b");
  {  // node b was written by a build whose op codes are shifted by 1000
    auto b = sql::open(dir.file("node-b.db"), sql::Mode::read_write, 1000);
    ASSERT_TRUE(b.ok());
    ASSERT_TRUE(b->exec("UPDATE ops SET op = op + 1000; UPDATE events SET op = op + 1000").ok());
  }
  auto merged = TraceDb::open(dir.file("merged.db"));
  ASSERT_TRUE(merged.ok());
  for (const char* node : {"node-a", "node-b"}) {
    auto source = reader(dir.file(std::string(node) + ".db"));
    auto runs = merged->import_from(source, node);
    ASSERT_TRUE(runs.ok()) << runs.error().message;
    EXPECT_EQ(*runs, 1);
  }
  sqlite3* h = merged->connection().get();
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM runs"), 2);
  EXPECT_EQ(query_int(h, "SELECT count(DISTINCT run_id) FROM runs"), 2);
  EXPECT_EQ(query_int(h, "SELECT run_id FROM runs WHERE label = 'on b' AND node = 'node-b'"), 2);
  EXPECT_EQ(query_int(h, "SELECT sweep_id FROM runs WHERE label = 'on b'"), 2);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM sweeps"), 2);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM events e JOIN ops o USING(op) WHERE e.run_id = 2 AND "
                         "o.name IN ('batch_wait', 'cudaLaunchKernel')"),
            2);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM events WHERE op NOT IN (SELECT op FROM ops)"), 0);
  // The profile, the health samples and the events' stacks come along, under the new run ids.
  for (const char* table : {"profile_frames", "profile_stacks", "profile_samples", "process_samples", "event_stacks"})
    EXPECT_EQ(query_int(h, std::string("SELECT count(*) FROM ") + table + " WHERE run_id = 2"), 1) << table;
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM event_stacks s JOIN events e USING(run_id, tid, ts_ns, op) "
                         "WHERE s.run_id = 2"),
            1);

  // A file that records an op this build does not know is bad input, and nothing is copied.
  {
    auto b = sql::open(dir.file("node-b.db"), sql::Mode::read_write, 1000);
    ASSERT_TRUE(b->exec("INSERT INTO ops VALUES (5000, 'cudaFutureCall', 'cuda_runtime')").ok());
  }
  auto newer = merged->import_from(reader(dir.file("node-b.db")), "node-b");
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.error().exit_code, kExitBadInput);
  EXPECT_NE(newer.error().message.find("cudaFutureCall"), std::string::npos);
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM runs"), 2);
}

TEST(EventWriter, WritesBatchesWithNullsForAbsentFields) {
  TempDir dir;
  std::string path = dir.file("w.db");
  ASSERT_TRUE(TraceDb::open(path).ok());
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
  sql::Connection db = reader(path);
  sqlite3* h = db.get();
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM events WHERE run_id=1"), int64_t(kEvents));
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM events WHERE bytes IS NULL AND arg IS NULL AND stream IS NULL"),
            int64_t(kEvents / 2));
  EXPECT_EQ(query_int(h, "SELECT count(*) FROM events WHERE bytes=4096 AND arg=1 AND stream=7 AND ret=0"),
            int64_t(kEvents / 2));
}

TEST(EventWriter, FullQueueDropsAndCounts) {
  TempDir dir;
  std::string path = dir.file("q.db");
  ASSERT_TRUE(TraceDb::open(path).ok());
  auto blocker = sql::open(path, sql::Mode::read_write, 0);
  ASSERT_TRUE(blocker.ok());
  auto writer = EventWriter::start(path, 1, 100);
  ASSERT_TRUE(writer.ok());
  // Another connection holds the write lock, so the writer thread stalls and the queue fills.
  ASSERT_TRUE(blocker->exec("BEGIN IMMEDIATE").ok());
  constexpr uint64_t kPushed = 10'000;
  uint64_t accepted = 0;
  for (uint64_t i = 0; i < kPushed; ++i) {
    accepted += (*writer)->push(fixture_event(i));
    if (i == 10) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // writer takes a first batch
  }
  ASSERT_TRUE(blocker->exec("COMMIT").ok());
  ASSERT_TRUE((*writer)->finish().ok());
  EXPECT_GT((*writer)->dropped(), 0u);
  EXPECT_LE(accepted, 100u + 11u);
  EXPECT_EQ((*writer)->written() + (*writer)->dropped(), kPushed);
  EXPECT_EQ(query_int(reader(path).get(), "SELECT count(*) FROM events"), int64_t((*writer)->written()));
}

// A burst larger than a direct insert is staged as packed batches and moved into events before
// finish() returns: every event arrives, with its fields, and nothing stays staged.
TEST(EventWriter, StagedBurstsAllReachTheEventsTable) {
  TempDir dir;
  std::string path = dir.file("staged.db");
  ASSERT_TRUE(TraceDb::open(path).ok());
  auto blocker = sql::open(path, sql::Mode::read_write, 0);
  ASSERT_TRUE(blocker.ok());
  constexpr uint64_t kBurst = 3 * EventWriter::kRecordsPerBatch + 5;
  auto writer = EventWriter::start(path, 1, 2 * kBurst);
  ASSERT_TRUE(writer.ok());
  // Holding the write lock lets the queue fill, so the writer takes one burst larger than a direct insert.
  ASSERT_TRUE(blocker->exec("BEGIN IMMEDIATE").ok());
  for (uint64_t i = 0; i < kBurst; ++i) ASSERT_TRUE((*writer)->push(fixture_event(i)));
  ASSERT_TRUE(blocker->exec("COMMIT").ok());
  ASSERT_TRUE((*writer)->finish().ok());
  EXPECT_GT((*writer)->peak_staged(), EventWriter::kDirectInsertMax);
  EXPECT_EQ((*writer)->written(), kBurst);
  EXPECT_EQ((*writer)->failed(), 0u);
  auto h = reader(path);
  EXPECT_EQ(query_int(h.get(), "SELECT count(*) FROM events"), int64_t(kBurst));
  EXPECT_EQ(query_int(h.get(), "SELECT count(DISTINCT ts_ns) FROM events WHERE bytes = 4096 AND stream = 7"),
            int64_t(kBurst));
  EXPECT_EQ(query_int(h.get(), "SELECT count(*) FROM event_batches"), 0);
}

// --db-max-mb: cuts fall past a quarter of the kept span, on whole seconds, never past the newest event.
TEST(EventWriter, NextCutDropsWholeSecondsAndKeepsTheNewest) {
  EXPECT_EQ(next_cut(500'000'000, 10'500'000'000), 3'000'000'000u);
  EXPECT_EQ(next_cut(2'000'000'000, 2'400'000'000), 2'400'000'000u);  // the span is under a slice
  EXPECT_EQ(next_cut(7, 7), 7u);
}

// A capped writer keeps the file under the cap by dropping its oldest events, however many come: the
// newest are there, nothing before the cut is, and the drops are counted.
TEST(EventWriter, CapKeepsTheFileUnderItAndTheNewestEvents) {
  TempDir dir;
  const std::string path = dir.file("capped.db");
  ASSERT_TRUE(TraceDb::open(path).ok());
  constexpr uint64_t kCap = 2u << 20;
  auto writer = EventWriter::start(path, 1, 1u << 20, kCap);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  // 200,000 events, one each 0.5 ms of a 100 s trace: about 25 MB uncapped.
  constexpr uint64_t kEvents = 200'000, kStepNs = 500'000;
  uint64_t largest = 0;
  for (uint64_t i = 0; i < kEvents; ++i) {
    ib_event e = fixture_event(i);
    e.ts_ns = 1'000'000'000 + i * kStepNs;
    ASSERT_TRUE((*writer)->push(e));
    if (i % 4000 == 3999) {  // the writer takes batches as a live trace gives them: each before the next
      for (int waited = 0; (*writer)->written() + (*writer)->dropped() < i + 1 && waited < 10'000; waited += 5)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::error_code ec;
      largest = std::max<uint64_t>(largest, std::filesystem::file_size(path, ec));
    }
  }
  ASSERT_TRUE((*writer)->finish().ok());
  const auto cut = (*writer)->dropped_before_ns();
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(*cut % kDropSliceNs, 0u);
  const uint64_t dropped = (*writer)->dropped_for_cap();
  EXPECT_GT(dropped, kEvents / 2);
  writer->reset();  // closes its connection: the log is checkpointed into the file
  std::error_code ec;
  largest = std::max<uint64_t>(largest, std::filesystem::file_size(path, ec));
  EXPECT_LE(largest, kCap) << "the file grew past the cap";
  auto h = reader(path);
  EXPECT_EQ(query_int(h.get(), "SELECT count(*) FROM events"), int64_t(kEvents - dropped));
  EXPECT_GE(query_int(h.get(), "SELECT min(ts_ns) FROM events"), int64_t(*cut));
  EXPECT_EQ(query_int(h.get(), "SELECT max(ts_ns) FROM events"), int64_t(1'000'000'000 + (kEvents - 1) * kStepNs));
}

// A staged batch that went missing or shrank is an error, not a run of zero-filled events.
TEST(EventTable, AMissingOrShortStagedBatchIsAnErrorAndInsertsNothing) {
  TempDir dir;
  std::string path = dir.file("unstage.db");
  ASSERT_TRUE(TraceDb::open(path).ok());
  auto table = EventTable::open(path, 1);
  ASSERT_TRUE(table.ok()) << table.error().message;
  std::vector<EventRecord> records(10);
  for (size_t i = 0; i < records.size(); ++i) records[i].ts_ns = 1000 + i;
  ASSERT_TRUE(table->stage(records.data(), records.size(), 1, 5).ok());  // batches 1 and 2
  auto other = sql::open(path, sql::Mode::read_write, 5000);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(other->exec("UPDATE event_batches SET records = substr(records, 1, 100) WHERE seq = 1").ok());
  Status shrunk = table->unstage(1, 5);
  ASSERT_FALSE(shrunk.ok());
  EXPECT_NE(shrunk.error().message.find("holds 100 bytes"), std::string::npos) << shrunk.error().message;
  Status missing = table->unstage(7, 5);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("is missing"), std::string::npos) << missing.error().message;
  EXPECT_TRUE(table->unstage(2, 5).ok());
  auto h = reader(path);
  EXPECT_EQ(query_int(h.get(), "SELECT count(*) FROM events"), 5);
  EXPECT_EQ(query_int(h.get(), "SELECT count(*) FROM events WHERE ts_ns = 0"), 0);
}

TEST(Decoding, ThreadRolesExitCodesAndMaps) {
  EXPECT_EQ(contract::thread_role("ib-worker-3", true, false), "worker");
  EXPECT_EQ(contract::thread_role("pt_data_worker", true, false), "worker");
  EXPECT_EQ(contract::thread_role("ib-pin", false, true), "pin");
  EXPECT_EQ(contract::thread_role("pt_data_pin", false, true), "pin");
  EXPECT_EQ(contract::thread_role("python3", true, true), "main");
  EXPECT_EQ(contract::thread_role("python3", false, true), "other");
  EXPECT_EQ(shell_exit_code(3 << 8), 3);
  EXPECT_EQ(shell_exit_code(9), 137);
  EXPECT_EQ(shell_exit_code(0), 0);

  std::string maps =
      "7f0000000000-7f0000001000 r-xp 00000000 08:01 123 /opt/venv/nvidia/cu13/lib/libcudart.so.13\n"
      "7f0000001000-7f0000002000 r--p 00001000 08:01 123 /opt/venv/nvidia/cu13/lib/libcudart.so.13\n"
      "7f0000003000-7f0000004000 r-xp 00000000 08:01 124 /usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06\n"
      "7f0000005000-7f0000006000 r-xp 00000000 08:01 125 /usr/lib/libcudnn.so.9\n"
      "7f0000006000-7f0000007000 r-xp 00000000 08:01 127 /opt/venv/nvidia/nccl/lib/libnccl.so.2\n"
      "7f0000007000-7f0000008000 rw-p 00000000 00:00 0 [heap]\n"
      "7f0000009000-7f000000a000 r-xp 00000000 08:01 126 /tmp/libcudart.so.12 (deleted)\n";
  auto libs = call_libraries_in_maps(maps);
  ASSERT_EQ(libs.size(), 3u);
  EXPECT_EQ(libs[0], "/opt/venv/nvidia/cu13/lib/libcudart.so.13");
  EXPECT_EQ(libs[1], "/usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06");
  EXPECT_EQ(libs[2], "/opt/venv/nvidia/nccl/lib/libnccl.so.2");
  EXPECT_EQ(classify_library("/x/libcudart.so.13"), CallLibrary::cuda_runtime);
  EXPECT_EQ(classify_library("/x/libcuda.so.1"), CallLibrary::cuda_driver);
  EXPECT_EQ(classify_library("/x/libnccl.so.2"), CallLibrary::nccl);
  EXPECT_FALSE(classify_library("/x/libcudnn.so.9").has_value());

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
  bool found = false;
  for (const ThreadInfo& t : table.rows()) {
    if (t.tid != 200) continue;
    found = true;
    EXPECT_EQ(t.pid, 200);
    EXPECT_EQ(t.ppid, 100);
    EXPECT_EQ(t.comm, "ib-worker-0");
    EXPECT_EQ(t.role, "worker");
    EXPECT_EQ(t.start_ns, 5u);
  }
  EXPECT_TRUE(found);
}

// torchrun (the launched root) forks a rank that execs with RANK=1 in its environment; the
// rank forks a DataLoader worker. The rank's main thread is a main loop of rank 1, the worker
// inherits rank 1, and the launcher, which runs no loop, is 'other'.
TEST(Decoding, RanksComeFromTheExecAndPassToForkedWorkers) {
  ThreadTable table;
  table.add_root(100);
  table.ensure(100, 100).comm = "python3";
  auto fork = [&](uint32_t parent, uint32_t child, const char* comm) {
    ib_event e{};
    e.op = IB_OP_FORK;
    e.pid = e.tid = parent;
    e.arg = child;
    strcpy(e.comm, comm);
    table.apply(e);
  };
  fork(100, 200, "python3");
  table.set_rank(200, 1);
  fork(200, 300, "pt_data_worker");
  fork(100, 400, "python3");  // a helper of the launcher: no rank
  std::map<pid_t, ThreadInfo> by_tid;
  for (const ThreadInfo& t : table.rows()) by_tid[t.tid] = t;
  EXPECT_EQ(by_tid[100].role, "other");
  EXPECT_FALSE(by_tid[100].rank.has_value());
  EXPECT_EQ(by_tid[200].role, "main");
  EXPECT_EQ(by_tid[200].rank, 1);
  EXPECT_EQ(by_tid[300].role, "worker");
  EXPECT_EQ(by_tid[300].rank, 1);
  EXPECT_FALSE(by_tid[400].rank.has_value());
  EXPECT_EQ(by_tid[400].role, "other");

  ThreadTable single;  // without ranks the launched process is the main loop
  single.add_root(100);
  single.ensure(100, 100).comm = "python3";
  EXPECT_EQ(single.rows().at(0).role, "main");
}

// A rank's number comes from RANK as torchrun sets it, else from LOCAL_RANK (a launcher that sets only
// that); what is not a small non-negative number is no rank.
TEST(Decoding, RanksComeFromRankElseLocalRank) {
  EXPECT_EQ(rank_from_environment("3", "1"), 3);
  EXPECT_EQ(rank_from_environment(std::nullopt, "1"), 1);
  EXPECT_EQ(rank_from_environment("", "2"), 2);
  EXPECT_EQ(rank_from_environment("x", "0"), 0);
  EXPECT_FALSE(rank_from_environment(std::nullopt, std::nullopt).has_value());
  EXPECT_FALSE(rank_from_environment("-1", "1234567").has_value());
  EXPECT_EQ(rank_from_environment("0000007", "1"), 7);  // zeros in front are still the number
  EXPECT_FALSE(rank_from_environment(" 1", "1 ").has_value());
}

// Each rank's WORLD_SIZE becomes the run's world_size setting when they agree (one job);
// processes of two jobs disagree, and then none is recorded but a problem says why.
TEST(Decoding, TheRanksWorldSizeIsARunSettingWhenTheyAgree) {
  ThreadTable job;
  job.set_rank(200, 2, 4);
  job.set_rank(300, 3, 4);
  job.set_rank(400, 0);  // WORLD_SIZE unset or unreadable: says nothing
  TraceTotals totals;
  record_world_size(job.world_sizes(), totals);
  ASSERT_EQ(totals.settings.size(), 1u);
  EXPECT_EQ(totals.settings[0].first, "world_size");
  EXPECT_EQ(totals.settings[0].second, "4");
  EXPECT_TRUE(totals.problems.empty());

  ThreadTable two_jobs;
  two_jobs.set_rank(200, 0, 2);
  two_jobs.set_rank(300, 1, 8);
  TraceTotals mixed;
  record_world_size(two_jobs.world_sizes(), mixed);
  EXPECT_TRUE(mixed.settings.empty());
  ASSERT_EQ(mixed.problems.size(), 1u);
  EXPECT_NE(mixed.problems[0].find("WORLD_SIZE values (2, 8)"), std::string::npos) << mixed.problems[0];

  TraceTotals none;
  record_world_size(ThreadTable().world_sizes(), none);
  EXPECT_TRUE(none.settings.empty() && none.problems.empty());
}

// The cookie each planned probe carries decodes to its spec in the kernel, at every level;
// --cuda-detail count leaves launches to an entry-only counter.
TEST(Ops, CookiesMatchTheSpecsAtEveryDetailLevel) {
  EXPECT_EQ(contract::op_name(IB_OP_CUDA_LAUNCH_KERNEL), "cudaLaunchKernel");
  EXPECT_EQ(contract::op_code("cuMemcpyHtoDAsync_v2"), IB_OP_CU_MEMCPY_HTOD_ASYNC);
  for (CallLibrary lib : {CallLibrary::cuda_runtime, CallLibrary::cuda_driver, CallLibrary::nccl})
    for (CudaDetail detail : {CudaDetail::count, CudaDetail::latency, CudaDetail::full}) {
      for (const PlannedProbe& p : plan_probes(lib, detail)) {
        EXPECT_EQ(IB_COOKIE_OP(p.cookie), p.spec->op);
        EXPECT_EQ(IB_COOKIE_BYTES_SRC(p.cookie), p.spec->bytes_src);
        EXPECT_EQ(IB_COOKIE_STREAM_SRC(p.cookie), p.spec->stream_src);
        EXPECT_EQ(p.spec->library, lib);
        const bool entry_only = IB_COOKIE_FLAGS(p.cookie) & IB_CALL_ENTRY_ONLY;
        EXPECT_EQ(entry_only, detail == CudaDetail::count && p.spec->hot) << contract::op_name(p.spec->op);
        if (entry_only) {
          EXPECT_FALSE(p.return_probe);
        }
      }
    }
  EXPECT_GT(plan_probes(CallLibrary::cuda_runtime, CudaDetail::full).size(),
            plan_probes(CallLibrary::cuda_runtime, CudaDetail::latency).size() / 2);
}

// A process that exits while its files are read: every reader says "nothing", none throws.
TEST(ProcFiles, ReadsOfAProcessThatExitedAreEmptyNotFatal) {
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c;
    (void)!read(go[0], &c, 1);
    _exit(0);
  }
  const std::string maps = "/proc/" + std::to_string(child) + "/maps";
  int fd = open(maps.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  auto stat = proc::read_stat(child);
  ASSERT_TRUE(stat.has_value());
  EXPECT_TRUE(proc::is_alive(child, stat->start_time));
  ASSERT_EQ(write(go[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  // The descriptor was opened while it lived; reading it now fails with ESRCH.
  EXPECT_FALSE(proc::read_all(fd).has_value());
  close(fd);
  EXPECT_FALSE(proc::read_file(maps).has_value());
  EXPECT_TRUE(mapped_call_libraries(child).empty());
  EXPECT_FALSE(proc::is_alive(child, stat->start_time));
  EXPECT_FALSE(proc::read_stat(child).has_value());
  EXPECT_TRUE(proc::thread_ids(child).empty());
  close(go[0]);
  close(go[1]);
  // The parsers: a comm with spaces and parentheses.
  auto parsed = proc::parse_stat("42 (a) b (c)) S 7 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->comm, "a) b (c)");
  EXPECT_EQ(parsed->ppid, 7);
  EXPECT_EQ(parsed->start_time, 12345u);
}

}  // namespace
}  // namespace ingero::tracer

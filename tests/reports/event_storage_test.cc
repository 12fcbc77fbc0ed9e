// SPDX-License-Identifier: Apache-2.0
// How events are read: TraceFile::events and its filters against a plain scan of the
// table (values of every stored width, several runs, rows in a write-ahead log), files of
// schema version 1 read through an in-memory upgrade, readers that leave the file as it
// was, and thread timelines from unsorted intervals.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "reports/render/commands.h"
#include "reports/analysis/thread_activity.h"
#include "reports/data/trace_data.h"
#include "tests/reports/scenario.h"

namespace ingero::reports::testing {
namespace {

const std::vector<std::string> kVariedOps = {"cuLaunchKernel", "offcpu_blocked", "runq_wait", "page_faults",
                                             "batch_wait"};

// Values of every integer width SQLite stores (1 to 8 bytes, the constants 0 and
// 1, negatives), over enough rows for a b-tree with interior pages.
void add_varied_events(TraceFixture& db, int64_t run, int count, uint32_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t magnitudes[] = {0, 1, 127, 128, 32'767, 8'388'607, 2'147'483'647, 140'737'488'355'327,
                                INT64_MAX / 2};
  for (int i = 0; i < count; ++i) {
    const int64_t ts = magnitudes[rng() % 9] - static_cast<int64_t>(rng() % 3);
    const int64_t dur = i % 7 == 0 ? 0 : (i % 11 == 0 ? 1 : static_cast<int64_t>(rng() % 5'000'000));
    const int64_t tid = i % 5 == 0 ? 4'000'000 : 100 + static_cast<int64_t>(rng() % 4);
    db.add_event(run, kVariedOps[rng() % kVariedOps.size()], ts, dur, tid, tid, std::nullopt,
                 static_cast<int64_t>(rng() % 100));
  }
}

using Row = std::array<int64_t, 4>;  // ts, dur, tid, arg

// The filter applied by hand to every row of the table.
std::vector<Row> scan(const TraceFile& trace, int64_t run, const std::string& op, const EventFilter& f) {
  auto stmt = trace.db().prepare(
      "SELECT e.ts_ns, e.dur_ns, e.tid, coalesce(e.arg, 0) FROM events e JOIN ops o USING(op) "
      "WHERE e.run_id = ? AND o.name = ?");
  EXPECT_TRUE(stmt.ok());
  stmt->bind(1, run).bind(2, op);
  std::vector<Row> rows;
  EXPECT_TRUE(stmt->for_each_row([&](const sql::Statement& r) {
    const Row row{r.column_int(0), r.column_int(1), r.column_int(2), r.column_int(3)};
    if (f.until_ns && !(row[0] < *f.until_ns)) return;
    if (f.from_ns && !(row[0] + row[1] > *f.from_ns)) return;
    if (!f.tids.empty() && std::find(f.tids.begin(), f.tids.end(), row[2]) == f.tids.end()) return;
    if (f.min_dur_ns && row[1] < *f.min_dur_ns) return;
    rows.push_back(row);
  }).ok());
  std::sort(rows.begin(), rows.end());
  return rows;
}

void expect_events_match_scan(const std::string& path, int64_t run, EventFilter filter) {
  auto trace = TraceFile::open(path);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  filter.ops = kVariedOps;
  auto events = (*trace)->events(run, filter);
  ASSERT_TRUE(events.ok()) << events.error().message;
  size_t total = 0;
  for (const std::string& op : kVariedOps) {
    const EventList& list = events->of(op);
    EXPECT_TRUE(std::is_sorted(list.begin(), list.end(),
                               [](const Event& a, const Event& b) { return a.ts_ns < b.ts_ns; }))
        << op;
    std::vector<Row> got;
    for (const Event& e : list) got.push_back({e.ts_ns, e.dur_ns, e.tid, e.arg});
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, scan(**trace, run, op, filter)) << op;
    total += got.size();
  }
  EXPECT_EQ(events->total(), total);
}

TEST(TraceEvents, EveryIntegerWidthAndEveryFilterReadAsAScanFindsThem) {
  const std::string path = temp_db_path("events-widths");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 2000 * kMs);
    db->begin();
    add_varied_events(*db, run, 60'000, 7);
    db->commit();
  }
  expect_events_match_scan(path, 1, {});
  EventFilter window;
  window.from_ns = 128;
  window.until_ns = 2'147'483'647;
  expect_events_match_scan(path, 1, window);
  EventFilter threads;
  threads.tids = {100, 4'000'000};
  threads.min_dur_ns = 2;
  expect_events_match_scan(path, 1, threads);
  EventFilter everything = window;
  everything.tids = {101};
  everything.min_dur_ns = 1'000'000;
  expect_events_match_scan(path, 1, everything);
}

TEST(TraceEvents, ReadsOneRunOfSeveral) {
  const std::string path = temp_db_path("events-runs");
  {
    auto db = TraceFixture::create(path);
    const int64_t first = add_loader_run(*db, 2000 * kMs, "first");
    const int64_t second = add_loader_run(*db, 2000 * kMs, "second");
    db->begin();
    for (int part = 0; part < 4; ++part) add_varied_events(*db, part % 2 == 0 ? first : second, 10'000, part);
    db->commit();
  }
  expect_events_match_scan(path, 1, {});
  expect_events_match_scan(path, 2, {});
}

TEST(TraceEvents, ReadsRowsStillInTheWriteAheadLog) {
  const std::string path = temp_db_path("events-wal");
  auto db = TraceFixture::create(path);
  const int64_t run = add_loader_run(*db, 2000 * kMs);
  db->begin();
  add_varied_events(*db, run, 5'000, 5);
  db->commit();
  // The writer stays open, so these rows stay in the log, not in the file.
  ASSERT_TRUE(db->db().exec("PRAGMA journal_mode = WAL").ok());
  db->begin();
  add_varied_events(*db, run, 1'000, 6);
  db->commit();

  auto trace = TraceFile::open(path);
  ASSERT_TRUE(trace.ok());
  EventFilter all;
  all.ops = kVariedOps;
  auto events = (*trace)->events(run, all);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->total(), 6'000u);
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A file written by the version-1 tracer: its op codes were positions in another list.
// It is read through an in-memory upgrade; the file itself stays as it was.
TEST(TraceFile, SchemaVersion1IsReadThroughAnInMemoryUpgrade) {
  const std::string path = temp_db_path("v1");
  std::filesystem::remove(path);
  {
    auto db = sql::open(path, sql::Mode::read_write, 0);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec(file_bytes(INGERO_V1_SCHEMA_SQL)).ok());
    ASSERT_TRUE(db->exec(
        "PRAGMA user_version = 1;"
        "INSERT INTO ops VALUES (3, 'batch_wait', 'workload'), (4, 'cudaMemcpyAsync', 'cuda_runtime'),"
        "  (5, 'page_fault', 'mm');"
        "INSERT INTO runs(run_id, label, kind, command_json, config_json, result_json, machine_json, started_unix,"
        "  start_ns, end_ns, root_pid, exit_code, status, traced)"
        "  VALUES (1, 'loader w2', 'workload', '[]', '{\"mode\":\"loader\",\"num_workers\":2}', NULL, '{}', 1.7e9,"
        "  0, 1000000000, 100, 0, 'ok', 1);"
        "INSERT INTO events(run_id, ts_ns, dur_ns, pid, tid, op, ret, bytes, arg, stream) VALUES"
        "  (1, 10, 5, 100, 100, 3, NULL, NULL, 0, NULL), (1, 20, 7, 100, 100, 4, 1, 4096, 1, 9),"
        "  (1, 30, 9, 100, 100, 4, 1, 4096, 1, 9), (1, 40, 0, 100, 100, 5, NULL, 4096, NULL, NULL);")
                    .ok());
  }
  const std::string before = file_bytes(path);
  auto trace = TraceFile::open(path);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_EQ((*trace)->schema_version(), 1);
  ASSERT_FALSE((*trace)->notes().empty());
  EXPECT_NE((*trace)->notes()[0].find("in-memory upgrade"), std::string::npos);
  auto events = (*trace)->events(1, {{"batch_wait", "cudaMemcpyAsync"}, {}, {}, {}, {}});
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->of("batch_wait").size(), 1u);
  EXPECT_EQ(events->of("cudaMemcpyAsync").size(), 2u);
  auto run = (*trace)->run(1);
  ASSERT_TRUE(run.ok()) << run.error().message;
  auto context = (*trace)->context(*run);
  ASSERT_TRUE(context.ok());
  // call_stats are rebuilt from the events of a file that stored every call.
  ASSERT_EQ(context->calls.size(), 1u);
  EXPECT_EQ(context->calls[0].op, "cudaMemcpyAsync");
  EXPECT_EQ(context->calls[0].calls, 2);
  EXPECT_EQ(context->calls[0].errors, 2);
  EXPECT_EQ(context->calls[0].bytes, 8192);
  EXPECT_FALSE(context->losses.has_value() && !context->losses->empty());
  trace->reset();
  EXPECT_EQ(file_bytes(path), before);
}

// explain, compare and recommend read; the file is byte for byte what it was, and no
// journal or shared-memory file is left beside it.
TEST(TraceFile, ReadersLeaveTheFileAsItWas) {
  const std::string path = temp_db_path("readers");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 2000 * kMs);
    db->begin();
    add_varied_events(*db, run, 5'000, 5);
    add_loader_run(*db, 2000 * kMs, "second");
    db->commit();
  }
  const std::string before = file_bytes(path);
  std::ostringstream out;
  EXPECT_TRUE(explain({path, 1, true, std::nullopt, true}, out).ok());
  (void)compare({path, 1, 2, false}, out);
  (void)recommend({path, std::nullopt, std::nullopt, true}, out);
  EXPECT_EQ(file_bytes(path), before);
  for (const char* side : {"-wal", "-shm", "-journal"}) EXPECT_FALSE(std::filesystem::exists(path + side)) << side;
}

ThreadIntervals sample_intervals() {
  ThreadIntervals t;
  for (int64_t i = 0; i < 200; ++i) {
    const int64_t base = i * 1000;
    t.preempted.push_back({base + 100, base + 300});
    t.runq.push_back({base + 250, base + 400});
    if (i % 3 == 0) t.blocked.push_back({base + 500, base + 900});
    if (i % 10 == 0) t.pinned_alloc.push_back({base + 450, base + 700});
    t.preempted.push_back({base + 950, base + 950});  // empty: no edges
    t.faults.push_back({base + 5, base + 5, 1});
  }
  return t;
}

template <class List>
void shuffle_list(List& list, std::mt19937& rng) {
  std::shuffle(list.begin(), list.end(), rng);
}

TEST(ThreadActivity, UnsortedIntervalsGiveTheSameTimeline) {
  const ThreadActivity sorted(kWorkerA, 0, 1'000'000, sample_intervals());
  ThreadIntervals shuffled = sample_intervals();
  std::mt19937 rng(11);
  shuffle_list(shuffled.preempted, rng);
  shuffle_list(shuffled.blocked, rng);
  shuffle_list(shuffled.runq, rng);
  shuffle_list(shuffled.pinned_alloc, rng);
  shuffle_list(shuffled.faults, rng);
  const ThreadActivity unsorted(kWorkerA, 0, 1'000'000, std::move(shuffled));

  ASSERT_EQ(sorted.segments().size(), unsorted.segments().size());
  for (size_t i = 0; i < sorted.segments().size(); ++i) {
    EXPECT_EQ(sorted.segments()[i].start_ns, unsorted.segments()[i].start_ns);
    EXPECT_EQ(sorted.segments()[i].end_ns, unsorted.segments()[i].end_ns);
    EXPECT_EQ(sorted.segments()[i].state, unsorted.segments()[i].state);
  }
  // First period: preempted [100,300) ∪ runq [250,400) → cpu_wait; the pinned
  // allocation [450,700) outranks blocked [500,900), which shows from 700.
  ASSERT_GE(sorted.segments().size(), 3u);
  EXPECT_EQ(sorted.segments()[0].start_ns, 100);
  EXPECT_EQ(sorted.segments()[0].end_ns, 400);
  EXPECT_EQ(sorted.segments()[0].state, ThreadState::cpu_wait);
  EXPECT_EQ(sorted.segments()[1].state, ThreadState::pinned_alloc);
  EXPECT_EQ(sorted.segments()[2].state, ThreadState::blocked);
  for (auto [from, to] : {std::pair<int64_t, int64_t>{0, 1000}, {150, 9'000}, {940, 960}, {0, 300'000}}) {
    EXPECT_EQ(sorted.switches_in(from, to), unsorted.switches_in(from, to));
    EXPECT_EQ(sorted.offcpu_overlap_ns(from, to), unsorted.offcpu_overlap_ns(from, to));
    EXPECT_EQ(sorted.faults_in(from, to), unsorted.faults_in(from, to));
  }
  // [0, 1000): preempted [100,300), the empty one at 950, blocked [500,900).
  EXPECT_EQ(sorted.switches_in(0, 1000), 3);
  EXPECT_EQ(sorted.offcpu_overlap_ns(0, 1000), 200 + 400);
}

}  // namespace
}  // namespace ingero::reports::testing

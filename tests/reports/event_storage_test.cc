// How events are read and held: TraceFile::events against plain SQL (values of
// every stored width, several runs, slice counts, values SQLite converts, rows in
// a write-ahead log), chunked event columns, thread timelines from unsorted
// intervals, and the huge-page allocator.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "reports/thread_activity.h"
#include "reports/trace_data.h"
#include "tests/reports/scenario.h"

namespace ingero::reports::testing {
namespace {

// Values of every integer width SQLite stores (1 to 8 bytes, the constants 0 and
// 1, negatives), over enough rows for a b-tree with interior pages.
void add_varied_events(TraceFixture& db, int64_t run, int count, uint32_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t magnitudes[] = {0, 1, 127, 128, 32'767, 8'388'607, 2'147'483'647, 140'737'488'355'327,
                                INT64_MAX / 2};
  const char* ops[] = {"cudaLaunchKernel", "offcpu_blocked", "runq_wait", "page_fault", "batch_wait"};
  for (int i = 0; i < count; ++i) {
    const int64_t ts = magnitudes[rng() % 9] - static_cast<int64_t>(rng() % 3);
    const int64_t dur = i % 7 == 0 ? 0 : (i % 11 == 0 ? 1 : static_cast<int64_t>(rng() % 5'000'000));
    const int64_t tid = i % 5 == 0 ? 4'000'000 : 100 + static_cast<int64_t>(rng() % 4);
    db.add_event(run, ops[rng() % 5], ts, dur, tid, tid);
  }
}

// Per op, the run's events as TraceFile::events reads them over `threads`
// slices, against SQL's answer in table order.
void expect_events_match_sql(const std::string& path, int64_t run, int threads = 2) {
  auto trace = TraceFile::open(path);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  auto events = (*trace)->events(run, threads);
  ASSERT_TRUE(events.ok()) << events.error().message;
  auto stmt = (*trace)->db().prepare(
      "SELECT ts_ns, dur_ns, tid FROM events WHERE run_id = ? AND op = ? ORDER BY rowid");
  ASSERT_TRUE(stmt.ok());
  int64_t expected_total = 0;
  for (size_t i = 0; i < events->ops.size(); ++i) {
    stmt->reset();
    stmt->bind(1, run).bind(2, events->ops[i].code);
    std::vector<std::array<int64_t, 3>> expected;
    ASSERT_TRUE(stmt->for_each_row([&](const sql::Statement& row) {
      expected.push_back({row.column_int(0), row.column_int(1), row.column_int(2)});
    }).ok());
    std::vector<std::array<int64_t, 3>> got;
    for (const Event& e : events->by_op[i]) got.push_back({e.ts_ns, e.dur_ns, e.tid});
    EXPECT_EQ(got, expected) << events->ops[i].name << " over " << threads << " slices";
    EXPECT_EQ(events->by_op[i].size(), expected.size());
    expected_total += static_cast<int64_t>(expected.size());
  }
  EXPECT_EQ(events->total(), expected_total);
}

TEST(TraceEvents, EveryIntegerWidthReadsAsSqlReturnsItForAnySliceCount) {
  const std::string path = temp_db_path("events-widths");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 2000 * kMs);
    db->begin();
    add_varied_events(*db, run, 120'000, 7);
    db->commit();
  }
  for (int threads : {1, 2, 3, 8}) expect_events_match_sql(path, 1, threads);
}

TEST(TraceEvents, ReadsOneRunOfSeveralInTableOrder) {
  const std::string path = temp_db_path("events-runs");
  {
    auto db = TraceFixture::create(path);
    const int64_t first = add_loader_run(*db, 2000 * kMs, "first");
    const int64_t second = add_loader_run(*db, 2000 * kMs, "second");
    db->begin();
    for (int part = 0; part < 4; ++part) add_varied_events(*db, part % 2 == 0 ? first : second, 20'000, part);
    db->commit();
  }
  expect_events_match_sql(path, 1);
  expect_events_match_sql(path, 2);
  expect_events_match_sql(path, 2, 5);
}

TEST(TraceEvents, RealValueInAnIntegerColumnReadsAsSqliteConvertsIt) {
  const std::string path = temp_db_path("events-real");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 2000 * kMs);
    db->begin();
    add_varied_events(*db, run, 5'000, 3);
    // A real with a fraction stays a real in an INTEGER column; SQLite reads it as 2.
    ASSERT_TRUE(db->db().exec(fmt::format("INSERT INTO events(run_id, ts_ns, dur_ns, pid, tid, op) "
                                             "VALUES ({}, 2.5, 10, {}, {}, {})",
                                             run, kMain, kMain, db->op_code("batch_wait"))).ok());
    db->commit();
  }
  expect_events_match_sql(path, 1);
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
  auto events = (*trace)->events(run);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->total(), 6'000);
  expect_events_match_sql(path, run);
}

TEST(EventColumn, IteratesChunksInOrderSkippingEmptyOnes) {
  EventColumn column;
  EXPECT_TRUE(column.begin() == column.end());
  column.append(EventList{});
  column.append(EventList{{1, 0, 7}, {2, 0, 7}});
  column.append(EventList{});
  column.append(EventList{{3, 0, 8}});
  column.append(EventList{});
  std::vector<int64_t> seen;
  for (const Event& e : column) seen.push_back(e.ts_ns);
  EXPECT_EQ(seen, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(column.size(), 3u);
  const EventList copied(column.begin(), column.end());
  EXPECT_EQ(copied.size(), 3u);
  EXPECT_EQ(copied.back().tid, 8);
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
    t.fault_ts.push_back(base + 5);
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
  shuffle_list(shuffled.fault_ts, rng);
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

TEST(HugePageAllocator, LargeBuffersAreAlignedAndGrow) {
  LargeVector<int64_t> values;
  for (int64_t i = 0; i < 3'000'000; ++i) values.push_back(i);  // crosses several 2 MiB sizes
  EXPECT_EQ(reinterpret_cast<uintptr_t>(values.data()) % huge_pages::kHugePageBytes, 0u);
  EXPECT_EQ(values[2'999'999], 2'999'999);
  LargeVector<int64_t> small(10, 4);
  EXPECT_EQ(small[9], 4);
}

}  // namespace
}  // namespace ingero::reports::testing

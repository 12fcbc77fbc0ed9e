// SPDX-License-Identifier: Apache-2.0
// The tracer's one writer thread: a bounded queue of decoded events drained into
// the trace DB over its own SQLite connection, in batched transactions.
//
// push() never blocks the ring-buffer consumer: a full queue drops the event and
// counts it (loss source 'queue'). Normal rates are inserted straight into the
// indexed events table. A burst larger than kDirectInsertMax is first persisted as
// packed records (table event_batches, one row per kRecordsPerBatch events), which
// costs a fraction of an indexed insert, and moved into events as the writer
// catches up; finish() moves whatever is left.
//
// With a cap on the DB (--db-max-mb), the writer drops the run's oldest events in whole time slices
// once the file's pages in use reach kCapHighShare of it, until they are under kCapLowShare: SQLite
// reuses the freed pages for the newer events, so the file stops growing near the high mark.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bpf/events.h"
#include "common/result.h"
#include "tracer/trace_db.h"

namespace ingero::tracer {

inline constexpr double kCapHighShare = 0.8;
inline constexpr double kCapLowShare = 0.6;
inline constexpr uint64_t kDropSliceNs = 1'000'000'000;
// Where the next cut goes when events from oldest_ns to newest_ns are kept: past a quarter of that
// span, rounded up to a whole slice (of the clock, so that cuts fall on whole seconds), and never past
// newest_ns (the newest events stay).
uint64_t next_cut(uint64_t oldest_ns, uint64_t newest_ns);

class EventWriter {
 public:
  static constexpr size_t kDirectInsertMax = 8192;
  static constexpr size_t kRecordsPerBatch = 16384;

  // db_max_bytes: the cap on the file (0: none).
  static Result<std::unique_ptr<EventWriter>> start(const std::string& db_path, int64_t run_id,
                                                    size_t queue_capacity, uint64_t db_max_bytes = 0);
  ~EventWriter();

  // False when the queue is full: the event is counted in dropped() and discarded.
  bool push(const ib_event& event);

  // Drains the queue and the staged batches, stops the thread; the first write
  // error, if any. Idempotent.
  Status finish();

  // Events stored in the DB (in events, or staged in event_batches until finish()).
  uint64_t written() const { return written_.load(std::memory_order_relaxed); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Events the writer could not store (SQLite errors); not counted in written().
  uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }
  // Most events waiting in event_batches at any time (0: the writer always kept up).
  uint64_t peak_staged() const { return peak_staged_.load(std::memory_order_relaxed); }
  // The cap: the events dropped to keep the file under it, and the time before which they were
  // (none while the cap was never reached).
  uint64_t dropped_for_cap() const { return cap_dropped_.load(std::memory_order_relaxed); }
  std::optional<uint64_t> dropped_before_ns() const {
    const uint64_t ns = dropped_before_.load(std::memory_order_relaxed);
    return ns ? std::optional<uint64_t>(ns) : std::nullopt;
  }

 private:
  struct StagedBatch {
    int64_t seq;
    size_t count;
  };

  EventWriter(EventTable table, size_t capacity, uint64_t db_max_bytes);
  void run();
  void keep_under_cap();
  void write(const std::vector<EventRecord>& batch);
  Status stage(const std::vector<EventRecord>& batch);
  Status unstage_oldest();
  void record_error(const Error& error);

  EventTable table_;
  const size_t capacity_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<EventRecord> pending_;
  bool stopping_ = false;
  std::optional<Error> error_;

  // Writer thread only.
  std::deque<StagedBatch> staged_;
  uint64_t staged_events_ = 0;
  int64_t next_seq_ = 0;
  const uint64_t db_max_bytes_;
  uint64_t oldest_ns_ = UINT64_MAX;  // of the events kept (as far as this writer knows)
  uint64_t newest_ns_ = 0;

  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> peak_staged_{0};
  std::atomic<uint64_t> cap_dropped_{0};
  std::atomic<uint64_t> dropped_before_{0};
  std::thread thread_;
};

}  // namespace ingero::tracer

// SPDX-License-Identifier: Apache-2.0
#include "tracer/event_writer.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace ingero::tracer {

namespace {
// The writer wakes at least this often even if nobody notifies it.
constexpr auto kWriterTick = std::chrono::milliseconds(20);

EventRecord to_record(const ib_event& e) {
  return EventRecord{e.ts_ns, e.dur_ns, e.pid, e.tid, e.op, e.flags, 0, e.ret, e.bytes, e.arg, e.stream};
}
}  // namespace

uint64_t next_cut(uint64_t oldest_ns, uint64_t newest_ns) {
  if (newest_ns <= oldest_ns) return newest_ns;
  const uint64_t past = oldest_ns + std::max<uint64_t>((newest_ns - oldest_ns) / 4, 1);
  const uint64_t whole = (past + kDropSliceNs - 1) / kDropSliceNs * kDropSliceNs;
  return std::min(whole, newest_ns);
}

Result<std::unique_ptr<EventWriter>> EventWriter::start(const std::string& db_path, int64_t run_id,
                                                        size_t queue_capacity, uint64_t db_max_bytes) {
  auto table = EventTable::open(db_path, run_id);
  if (!table) return table.error();
  // The log beside the file is checkpointed and truncated at an eighth of the cap.
  if (db_max_bytes > 0)
    if (Status s = table->bound_log(db_max_bytes / 8); !s) return s.error();
  auto writer = std::unique_ptr<EventWriter>(
      new EventWriter(std::move(*table), std::max<size_t>(queue_capacity, 1), db_max_bytes));
  writer->thread_ = std::thread([w = writer.get()] { w->run(); });
  return writer;
}

EventWriter::EventWriter(EventTable table, size_t capacity, uint64_t db_max_bytes)
    : table_(std::move(table)), capacity_(capacity), db_max_bytes_(db_max_bytes) {
  pending_.reserve(std::min<size_t>(capacity_, 1u << 16));
}

// The finish whose result counts is the tracer's stop(); here only a writer that was never finished is.
EventWriter::~EventWriter() { (void)finish(); }

bool EventWriter::push(const ib_event& event) {
  bool was_empty;
  {
    std::lock_guard lock(mutex_);
    if (pending_.size() >= capacity_ || stopping_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    was_empty = pending_.empty();
    pending_.push_back(to_record(event));
  }
  if (was_empty) wake_.notify_one();
  return true;
}

Status EventWriter::finish() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (!thread_.joinable()) return error_ ? Status(*error_) : Status();
  thread_.join();
  // Durable from here on: sync the log into the database file.
  Status synced = table_.sync();
  std::lock_guard lock(mutex_);
  if (error_) return *error_;
  return synced;
}

void EventWriter::run() {
  std::vector<EventRecord> batch;
  for (;;) {
    bool stopping;
    {
      std::unique_lock lock(mutex_);
      if (staged_.empty()) wake_.wait_for(lock, kWriterTick, [&] { return !pending_.empty() || stopping_; });
      batch.swap(pending_);
      stopping = stopping_;
    }
    if (!batch.empty()) {
      write(batch);
      if (db_max_bytes_ > 0) keep_under_cap();
    }
    // The backlog shrinks one staged batch per round, but only while new events come
    // slower than they are indexed: during a burst every moment goes to keeping up.
    bool keeping_up = batch.size() <= kDirectInsertMax;
    if (!staged_.empty() && (keeping_up || stopping))
      if (Status s = unstage_oldest(); !s) record_error(s.error());
    if (stopping && batch.empty() && staged_.empty()) return;
    batch.clear();
  }
}

void EventWriter::write(const std::vector<EventRecord>& batch) {
  Status s = batch.size() <= kDirectInsertMax ? table_.insert(batch.data(), batch.size()) : stage(batch);
  if (!s) {
    failed_.fetch_add(batch.size(), std::memory_order_relaxed);
    record_error(s.error());
    return;
  }
  written_.fetch_add(batch.size(), std::memory_order_relaxed);
  // After a cut, the kept span starts at it: an interval that began before it and ended after it is
  // stored, and goes with the next cut.
  const bool cut = dropped_before_.load(std::memory_order_relaxed) > 0;
  for (const EventRecord& e : batch) {
    if (!cut) oldest_ns_ = std::min(oldest_ns_, e.ts_ns);
    newest_ns_ = std::max(newest_ns_, e.ts_ns);
  }
}

void EventWriter::keep_under_cap() {
  auto used = table_.used_bytes();
  const auto high = static_cast<uint64_t>(static_cast<double>(db_max_bytes_) * kCapHighShare);
  const auto low = static_cast<uint64_t>(static_cast<double>(db_max_bytes_) * kCapLowShare);
  if (used && *used < high) return;
  while (used && *used >= low && oldest_ns_ < newest_ns_) {
    const uint64_t cut = next_cut(oldest_ns_, newest_ns_);
    auto dropped = table_.drop_before(cut);
    if (!dropped) return record_error(dropped.error());
    cap_dropped_.fetch_add(*dropped, std::memory_order_relaxed);
    dropped_before_.store(cut, std::memory_order_relaxed);
    oldest_ns_ = cut;
    used = table_.used_bytes();
  }
  if (!used) record_error(used.error());
}

void EventWriter::record_error(const Error& error) {
  std::lock_guard lock(mutex_);
  if (!error_) error_ = error;
}

Status EventWriter::stage(const std::vector<EventRecord>& batch) {
  if (Status s = table_.stage(batch.data(), batch.size(), next_seq_, kRecordsPerBatch); !s) return s;
  for (size_t first = 0; first < batch.size(); first += kRecordsPerBatch)
    staged_.push_back({next_seq_++, std::min(kRecordsPerBatch, batch.size() - first)});
  staged_events_ += batch.size();
  if (staged_events_ > peak_staged_.load(std::memory_order_relaxed))
    peak_staged_.store(staged_events_, std::memory_order_relaxed);
  return {};
}

Status EventWriter::unstage_oldest() {
  StagedBatch oldest = staged_.front();
  Status moved = table_.unstage(oldest.seq, oldest.count);
  if (!moved) {
    // The rows stay in event_batches; they are counted as failed, not written.
    written_.fetch_sub(oldest.count, std::memory_order_relaxed);
    failed_.fetch_add(oldest.count, std::memory_order_relaxed);
  }
  staged_.pop_front();
  staged_events_ -= oldest.count;
  return moved;
}

}  // namespace ingero::tracer

#include "tracer/event_writer.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "tracer/trace_db.h"

namespace ingero::tracer {

namespace {
// The writer wakes at least this often even if nobody notifies it.
constexpr auto kWriterTick = std::chrono::milliseconds(20);

EventRecord to_record(const ib_event& e) {
  return EventRecord{e.ts_ns, e.dur_ns, e.pid, e.tid, e.op, e.flags, 0, e.ret, e.bytes, e.arg, e.stream};
}
}  // namespace

Result<std::unique_ptr<EventWriter>> EventWriter::start(const std::string& db_path, int64_t run_id,
                                                        size_t queue_capacity) {
  auto db = open_trace_db(db_path);
  if (!db) return db.error();
  // A large page cache keeps the two event indexes in memory during a run. Without
  // syncs during the run (WAL: a crash of this process still leaves a consistent
  // file); finish() syncs once at the end.
  if (Status s = sql::exec(db->get(), "PRAGMA cache_size = -65536; PRAGMA synchronous = OFF"); !s)
    return s.error();
  auto prepare = [&](const char* text) { return sql::Statement::prepare(db->get(), text); };
  auto insert_event = prepare(
      "INSERT INTO events(run_id, ts_ns, dur_ns, pid, tid, op, ret, bytes, arg, stream) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  auto insert_batch = prepare("INSERT INTO event_batches(run_id, seq, count, records) VALUES(?, ?, ?, ?)");
  auto select_batch = prepare("SELECT records FROM event_batches WHERE run_id = ? AND seq = ?");
  auto delete_batch = prepare("DELETE FROM event_batches WHERE run_id = ? AND seq = ?");
  for (auto* stmt : {&insert_event, &insert_batch, &select_batch, &delete_batch})
    if (!*stmt) return stmt->error();
  Statements statements{std::move(*insert_event), std::move(*insert_batch), std::move(*select_batch),
                        std::move(*delete_batch)};
  auto writer = std::unique_ptr<EventWriter>(
      new EventWriter(std::move(*db), std::move(statements), run_id, std::max<size_t>(queue_capacity, 1)));
  writer->thread_ = std::thread([w = writer.get()] { w->run(); });
  return writer;
}

EventWriter::EventWriter(sql::Connection db, Statements statements, int64_t run_id, size_t capacity)
    : db_(std::move(db)), sql_(std::move(statements)), run_id_(run_id), capacity_(capacity) {
  pending_.reserve(std::min<size_t>(capacity_, 1u << 16));
}

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
  Status synced = sql::exec(db_.get(), "PRAGMA synchronous = NORMAL; PRAGMA wal_checkpoint(PASSIVE)");
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
    if (!batch.empty()) write(batch);
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
  Status s = batch.size() <= kDirectInsertMax ? insert_events(batch.data(), batch.size()) : stage(batch);
  if (!s) {
    failed_.fetch_add(batch.size(), std::memory_order_relaxed);
    record_error(s.error());
    return;
  }
  written_.fetch_add(batch.size(), std::memory_order_relaxed);
}

void EventWriter::record_error(const Error& error) {
  std::lock_guard lock(mutex_);
  if (!error_) error_ = error;
}

Status EventWriter::insert_events(const EventRecord* records, size_t count) {
  auto txn = sql::Transaction::begin(db_.get());
  if (!txn) return txn.error();
  if (Status s = insert_rows(records, count); !s) return s;
  return txn->commit();
}

Status EventWriter::insert_rows(const EventRecord* records, size_t count) {
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

Status EventWriter::stage(const std::vector<EventRecord>& batch) {
  auto txn = sql::Transaction::begin(db_.get());
  if (!txn) return txn.error();
  std::vector<StagedBatch> added;
  for (size_t first = 0; first < batch.size(); first += kRecordsPerBatch) {
    size_t count = std::min(kRecordsPerBatch, batch.size() - first);
    int64_t seq = next_seq_ + static_cast<int64_t>(added.size());
    Status s = sql_.insert_batch.bind(1, run_id_)
                   .bind(2, seq)
                   .bind(3, static_cast<int64_t>(count))
                   .bind_blob(4, batch.data() + first, count * sizeof(EventRecord))
                   .run();
    if (!s) return s;
    added.push_back({seq, count});
  }
  if (Status s = txn->commit(); !s) return s;
  next_seq_ += static_cast<int64_t>(added.size());
  staged_.insert(staged_.end(), added.begin(), added.end());
  staged_events_ += batch.size();
  if (staged_events_ > peak_staged_.load(std::memory_order_relaxed))
    peak_staged_.store(staged_events_, std::memory_order_relaxed);
  return {};
}

Status EventWriter::unstage_oldest() {
  StagedBatch oldest = staged_.front();
  std::vector<EventRecord> records(oldest.count);
  sql::Statement& select = sql_.select_batch;
  select.bind(1, run_id_).bind(2, oldest.seq);
  auto row = select.step();
  if (row.ok() && *row) {
    size_t bytes = std::min(select.column_bytes(0), records.size() * sizeof(EventRecord));
    memcpy(records.data(), select.column_blob(0), bytes);
  }
  select.reset();
  if (!row) return row.error();
  // Moving rows and deleting the batch in one transaction: a batch is never in both tables.
  Status moved;
  {
    auto txn = sql::Transaction::begin(db_.get());
    moved = txn ? insert_rows(records.data(), records.size()) : Status(txn.error());
    if (moved) moved = sql_.delete_batch.bind(1, run_id_).bind(2, oldest.seq).run();
    if (moved) moved = txn->commit();
  }
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

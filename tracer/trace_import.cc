// SPDX-License-Identifier: Apache-2.0
// TraceDb::import_from: `ingero-bench merge`, several nodes' trace DBs into one.
#include <cstring>
#include <cstddef>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "tracer/trace_db.h"

namespace ingero::tracer {

namespace {

// Every table of schema.sql, with how its keys move: run_id and sweep_id are offset, op
// codes are translated by name, and a run's missing node is filled in.
struct TableCopy {
  const char* name;
  const char* order;  // keeps the copy in key order
};
constexpr TableCopy kTables[] = {
    {"sweeps", "sweep_id"},          {"sweep_points", "sweep_id, position"},
    {"runs", "run_id"},              {"threads", "run_id, tid"},
    {"thread_stats", "run_id, tid"}, {"call_stats", "run_id, tid, op"},
    {"call_histograms", "run_id, pid, op, slot"}, {"histograms", "run_id, pid, metric, slot"},
    {"losses", "run_id, source"},    {"run_settings", "run_id, key"},
    {"events", "run_id, ts_ns"},     {"event_batches", "run_id, seq"},
    {"loaders", "run_id, pid, loader"}, {"gpus", "run_id, gpu"},
    {"gpu_samples", "run_id, metric, ts_ns"}, {"call_sampling", "run_id, pid, op"},
    {"call_sampling_windows", "run_id, pid, op, seq"},
    {"profile_frames", "run_id, frame_id"}, {"profile_stacks", "run_id, stack_id"},
    {"profile_samples", "run_id, tid, stack_id, bucket_ns"}, {"process_samples", "run_id, pid, ts_ns"},
    {"event_stacks", "run_id, tid, ts_ns, op"},
};

Result<std::vector<std::string>> columns_of(const sql::Connection& db, const std::string& table) {
  auto stmt = db.prepare(fmt::format("PRAGMA table_info({})", table));
  if (!stmt) return stmt.error();
  std::vector<std::string> names;
  Status read = stmt->for_each_row([&](const sql::Statement& row) { names.push_back(row.column_text(1)); });
  if (!read) return read.error();
  return names;
}

// Source op code -> this file's code, by name.
Result<std::map<int64_t, int64_t>> op_translation(const sql::Connection& source, const sql::Connection& target) {
  std::map<std::string, int64_t> mine;
  auto own = target.prepare("SELECT op, name FROM ops");
  if (!own) return own.error();
  if (Status s = own->for_each_row([&](const sql::Statement& r) { mine[r.column_text(1)] = r.column_int(0); }); !s)
    return s.error();
  std::map<int64_t, int64_t> map;
  auto theirs = source.prepare("SELECT op, name FROM ops");
  if (!theirs) return theirs.error();
  std::string unknown;
  Status read = theirs->for_each_row([&](const sql::Statement& r) {
    auto it = mine.find(r.column_text(1));
    if (it == mine.end()) unknown += (unknown.empty() ? "" : ", ") + r.column_text(1);
    else map[r.column_int(0)] = it->second;
  });
  if (!read) return read.error();
  if (!unknown.empty())
    return Error::bad_input(fmt::format("'{}' records ops this build does not know ({})", source.path(), unknown),
                            "merge with the ingero-bench release that wrote it, or a newer one");
  return map;
}

Result<int64_t> max_id(const sql::Connection& db, const char* table, const char* key) {
  auto v = db.query_int(fmt::format("SELECT max({}) FROM {}", key, table));
  if (!v) return v.error();
  return v->value_or(0);
}

// The op field of each packed 64-byte EventRecord, translated.
std::string translate_records(const void* data, size_t bytes, const std::map<int64_t, int64_t>& ops) {
  std::string out(static_cast<const char*>(data), bytes);
  constexpr size_t kOpOffset = offsetof(EventRecord, op);
  for (size_t at = 0; at + sizeof(EventRecord) <= out.size(); at += sizeof(EventRecord)) {
    uint16_t op = 0;
    memcpy(&op, out.data() + at + kOpOffset, sizeof op);
    auto it = ops.find(op);
    if (it != ops.end()) op = static_cast<uint16_t>(it->second);
    memcpy(out.data() + at + kOpOffset, &op, sizeof op);
  }
  return out;
}

}  // namespace

Result<int64_t> TraceDb::import_from(const sql::Connection& source, const std::string& node) {
  auto ops = op_translation(source, db_);
  if (!ops) return ops.error();
  auto tx = sql::Transaction::begin(db_.get());
  if (!tx) return tx.error();
  auto run_offset = max_id(db_, "runs", "run_id");
  if (!run_offset) return run_offset.error();
  auto sweep_offset = max_id(db_, "sweeps", "sweep_id");
  if (!sweep_offset) return sweep_offset.error();

  for (const TableCopy& table : kTables) {
    auto theirs = columns_of(source, table.name);
    if (!theirs) return theirs.error();
    auto mine = columns_of(db_, table.name);
    if (!mine) return mine.error();
    const std::set<std::string> known(mine->begin(), mine->end());
    std::vector<std::string> columns;
    for (const std::string& c : *theirs)
      if (known.count(c)) columns.push_back(c);
    if (columns.empty()) continue;
    std::string list, marks;
    for (const std::string& c : columns) {
      list += (list.empty() ? "" : ", ") + c;
      marks += marks.empty() ? "?" : ", ?";
    }
    auto read = source.prepare(fmt::format("SELECT {} FROM {} ORDER BY {}", list, table.name, table.order));
    if (!read) return read.error();
    auto write = db_.prepare(fmt::format("INSERT INTO {}({}) VALUES({})", table.name, list, marks));
    if (!write) return write.error();
    const bool is_runs = std::strcmp(table.name, "runs") == 0;
    std::string blob;
    std::optional<Error> write_error;
    Status copied = read->for_each_row([&](const sql::Statement& row) {
      for (size_t i = 0; i < columns.size(); ++i) {
        const int index = static_cast<int>(i) + 1;
        const std::string& c = columns[i];
        sqlite3_value* value = sqlite3_column_value(row.handle(), static_cast<int>(i));
        const bool null = row.column_is_null(static_cast<int>(i));
        if (c == "run_id" && !null) {
          write->bind(index, row.column_int(static_cast<int>(i)) + *run_offset);
        } else if (c == "sweep_id" && !null) {
          write->bind(index, row.column_int(static_cast<int>(i)) + *sweep_offset);
        } else if (c == "op" && !null) {
          auto it = ops->find(row.column_int(static_cast<int>(i)));
          write->bind(index, it == ops->end() ? row.column_int(static_cast<int>(i)) : it->second);
        } else if (c == "node" && null && (is_runs || std::strcmp(table.name, "sweeps") == 0)) {
          write->bind(index, node);
        } else if (c == "records") {
          blob = translate_records(row.column_blob(static_cast<int>(i)), row.column_bytes(static_cast<int>(i)), *ops);
          write->bind_blob(index, blob.data(), blob.size());
        } else {
          sqlite3_bind_value(write->handle(), index, value);
        }
      }
      if (write_error) return;
      if (Status s = write->run(); !s) write_error = s.error();
    });
    if (!copied) return copied.error();
    if (write_error)
      return Error::failure(fmt::format("copying table {} into '{}' failed: {}", table.name, path(),
                                        write_error->message));
  }
  auto copied_runs = source.query_int("SELECT count(*) FROM runs");
  if (!copied_runs) return copied_runs.error();
  if (Status s = tx->commit(); !s) return s.error();
  return copied_runs->value_or(0);
}

}  // namespace ingero::tracer

#include "reports/trace_data.h"

#include <algorithm>
#include <filesystem>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

namespace ingero::reports {
namespace {

constexpr const char* kOpenHint =
    "pass a trace DB written by 'ingero-bench run' or 'ingero-bench trace' (--db PATH)";

const EventColumn kNoEvents;

nlohmann::json parse_json_or_null(const std::optional<std::string>& text) {
  if (!text) return nullptr;
  auto parsed = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? nlohmann::json(nullptr) : parsed;
}

Error query_failed(const sql::Connection& db, const char* what) {
  return Error::failure(fmt::format("{}: cannot read {}: {}", db.path(), what, db.last_error()));
}

// Calls on_row for each row of a query whose one parameter is the run id; a failed
// step is reported as a failure to read table.
template <class OnRow>
Status read_run_rows(const sql::Connection& db, const char* table, const char* query, int64_t run_id,
                     OnRow&& on_row) {
  auto stmt = db.prepare(query);
  if (!stmt) return stmt.error();
  stmt->bind(1, run_id);
  if (Status read = stmt->for_each_row(on_row); !read) return query_failed(db, table);
  return {};
}

Status check_tables(const sql::Connection& db) {
  for (const char* table : {"runs", "ops", "events", "threads", "thread_stats", "histograms",
                            "losses", "run_settings"}) {
    auto stmt = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
    if (!stmt) return stmt.error();
    stmt->bind(1, table);
    auto found = stmt->step();
    if (!found || !*found) {
      return Error::bad_input(
          fmt::format("'{}' is not an ingero-bench trace DB: table '{}' is missing", db.path(), table),
          kOpenHint);
    }
  }
  return {};
}

RunRecord read_run_row(const sql::Statement& row) {
  RunRecord run;
  run.run_id = row.column_int(0);
  run.label = row.column_text(1);
  run.kind = row.column_text(2);
  run.status = row.column_text(3);
  run.config = parse_json_or_null(row.column_optional_text(4));
  run.result = parse_json_or_null(row.column_optional_text(5));
  run.machine = parse_json_or_null(row.column_optional_text(6));
  if (!run.machine.is_object()) run.machine = nlohmann::json::object();
  run.start_ns = row.column_int(7);
  run.end_ns = row.column_optional_int(8);
  run.root_pid = row.column_optional_int(9);
  run.traced = row.column_int(10) != 0;
  return run;
}

constexpr const char* kRunColumns =
    "SELECT run_id, label, kind, status, config_json, result_json, machine_json, start_ns, end_ns, "
    "root_pid, traced FROM runs";

// Maps op codes to positions in EventSet::ops; codes are small in practice, so a
// flat table keeps the per-row lookup of the scan cheap.
class OpIndex {
 public:
  explicit OpIndex(const std::vector<OpInfo>& ops) : op_count_(ops.size()) {
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].code >= 0 && ops[i].code < kFlatLimit) {
        if (flat_.size() <= static_cast<size_t>(ops[i].code)) flat_.resize(ops[i].code + 1, -1);
        flat_[ops[i].code] = static_cast<int>(i);
      } else {
        sparse_[ops[i].code] = static_cast<int>(i);
      }
    }
  }
  size_t size() const { return op_count_; }
  int find(int64_t code) const {
    if (code >= 0 && static_cast<size_t>(code) < flat_.size()) return flat_[code];
    auto it = sparse_.find(code);
    return it == sparse_.end() ? -1 : it->second;
  }

 private:
  static constexpr int64_t kFlatLimit = 1 << 16;
  size_t op_count_ = 0;
  std::vector<int> flat_;
  std::unordered_map<int64_t, int> sparse_;
};

struct ScanSlice {
  int64_t first_rowid = 0;
  int64_t last_rowid = 0;
};

struct TableScan {
  int64_t run_id = 0;
  bool whole_table = false;  // every row belongs to the run
  int64_t first_rowid = 0;
  int64_t last_rowid = 0;
  OpIndex index;
  int parts = 1;
};

// A scanning connection never writes. It reads pages into SQLite's default-sized
// page cache (each page is needed once) rather than through a memory map: on the
// virtual machine measured, the page faults of a mapped 700 MB file made each
// half of the scan ~10 % slower than copying the pages. Failures only cost speed.
void tune_for_scan(const sql::Connection& db) {
  (void)db.exec("PRAGMA query_only = ON");
  (void)db.exec("PRAGMA temp_store = MEMORY");
}

// One connection per slice: SQLite decodes rows on the calling thread, so
// separate connections over disjoint rowid ranges use separate cores.
Status scan_slice(const std::string& path, const TableScan& scan, const ScanSlice& slice,
                  std::vector<EventList>& out) {
  auto db = open_database(path, sql::Mode::read_only);
  if (!db) return db.error();
  tune_for_scan(*db);
  // Rowid bounds make SQLite seek to the slice and walk the table b-tree, which
  // yields rowid order by itself: the ORDER BY states the order the caller relies
  // on and costs no sort.
  const char* sql = scan.whole_table
                        ? "SELECT op, ts_ns, dur_ns, tid FROM events WHERE rowid BETWEEN ?1 AND ?2 "
                          "ORDER BY rowid"
                        : "SELECT op, ts_ns, dur_ns, tid FROM events "
                          "WHERE rowid BETWEEN ?1 AND ?2 AND +run_id = ?3 ORDER BY rowid";
  auto stmt = db->prepare(sql);
  if (!stmt) return query_failed(*db, "events");
  // The loop runs once per event, so it steps through the C API directly and reads
  // just the four columns it keeps (the run filter stays inside SQLite), without
  // any per-row wrapper or allocation.
  sqlite3_stmt* rows = stmt->handle();
  sqlite3_bind_int64(rows, 1, slice.first_rowid);
  sqlite3_bind_int64(rows, 2, slice.last_rowid);
  if (!scan.whole_table) sqlite3_bind_int64(rows, 3, scan.run_id);
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
    const int position = scan.index.find(sqlite3_column_int64(rows, 0));
    if (position < 0) continue;  // an op code missing from ops: nothing can name it
    out[position].push_back(
        Event{sqlite3_column_int64(rows, 1), sqlite3_column_int64(rows, 2), sqlite3_column_int64(rows, 3)});
  }
  if (rc != SQLITE_DONE) return query_failed(*db, "events");
  return {};
}

// Share of the scanned rowid range holding each op of the run, from point lookups
// at evenly spaced rowids. Reserving from it keeps the scan from regrowing (and
// copying) lists of millions of events; reserved but unused room is never touched,
// so it costs no memory, and a wrong guess only costs regrowth.
std::vector<double> estimate_op_shares(const sql::Connection& db, const TableScan& scan, const ScanSlice& slice) {
  constexpr int kSamples = 2000;
  std::vector<double> shares(scan.index.size(), 0.0);
  auto stmt = db.prepare("SELECT op, run_id FROM events WHERE rowid >= ? ORDER BY rowid LIMIT 1");
  if (!stmt) return shares;
  const double step = static_cast<double>(slice.last_rowid - slice.first_rowid + 1) / kSamples;
  for (int i = 0; i < kSamples; ++i) {
    stmt->reset();
    stmt->bind(1, slice.first_rowid + static_cast<int64_t>(i * step));
    auto row = stmt->step();
    if (!row || !*row || stmt->column_int(1) != scan.run_id) continue;
    const int position = scan.index.find(stmt->column_int(0));
    if (position >= 0) shares[position] += 1.0 / kSamples;
  }
  return shares;
}

size_t reserve_for(double share, int64_t rows) {
  const double margin = 0.005 + 0.1 * share;
  return static_cast<size_t>(std::min(1.0, share + margin) * static_cast<double>(rows)) + 1024;
}

std::vector<ScanSlice> split_rowids(int64_t first, int64_t last, int parts) {
  std::vector<ScanSlice> slices;
  const int64_t span = last - first + 1;
  const int64_t step = std::max<int64_t>(1, (span + parts - 1) / parts);
  for (int64_t lo = first; lo <= last; lo += step) {
    slices.push_back({lo, std::min(last, lo + step - 1)});
  }
  return slices;
}

// Reads every slice, slice 0 on the calling thread and each other one on its own
// thread; partial[slice][op] receives the slice's events of that op in rowid order.
Status read_events(const sql::Connection& db, const TableScan& scan, std::vector<std::vector<EventList>>& partial) {
  const auto slices = split_rowids(scan.first_rowid, scan.last_rowid, scan.parts);
  partial.assign(slices.size(), std::vector<EventList>(scan.index.size()));
  for (size_t i = 0; i < slices.size(); ++i) {
    const auto shares = estimate_op_shares(db, scan, slices[i]);
    const int64_t rows = slices[i].last_rowid - slices[i].first_rowid + 1;
    for (size_t op = 0; op < shares.size(); ++op) {
      if (shares[op] > 0) partial[i][op].reserve(reserve_for(shares[op], rows));
    }
  }
  std::vector<Status> outcome(slices.size());
  std::vector<std::thread> workers;
  for (size_t i = 1; i < slices.size(); ++i) {
    workers.emplace_back([&, i] { outcome[i] = scan_slice(db.path(), scan, slices[i], partial[i]); });
  }
  if (!slices.empty()) outcome[0] = scan_slice(db.path(), scan, slices[0], partial[0]);
  for (auto& worker : workers) worker.join();
  for (const auto& status : outcome) {
    if (!status) return status.error();
  }
  return {};
}

}  // namespace

ThreadCounters& ThreadCounters::operator+=(const ThreadCounters& other) {
  voluntary_switches += other.voluntary_switches;
  involuntary_switches += other.involuntary_switches;
  oncpu_ns += other.oncpu_ns;
  offcpu_ns += other.offcpu_ns;
  offcpu_max_ns = std::max(offcpu_max_ns, other.offcpu_max_ns);
  runq_count += other.runq_count;
  runq_ns += other.runq_ns;
  page_allocs += other.page_allocs;
  page_alloc_bytes += other.page_alloc_bytes;
  page_faults += other.page_faults;
  return *this;
}

ThreadCounters total_counters(const std::vector<ThreadStatsRecord>& thread_stats) {
  ThreadCounters total;
  for (const auto& s : thread_stats) total += s.counters;
  return total;
}

const EventColumn& EventSet::of(const std::string& op_name) const {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].name == op_name) return by_op[i];
  }
  return kNoEvents;
}

EventColumn* EventSet::find(const std::string& op_name) {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].name == op_name) return &by_op[i];
  }
  return nullptr;
}

int64_t EventSet::total() const {
  int64_t total = 0;
  for (const auto& events : by_op) total += static_cast<int64_t>(events.size());
  return total;
}

Result<sql::Connection> open_database(const std::string& path, sql::Mode mode) {
  auto db = sql::open(path, mode, 5000);
  if (!db) return Error::bad_input(db.error().message, kOpenHint);
  return db;
}

Result<std::unique_ptr<TraceFile>> TraceFile::open(const std::string& path) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) {
    return Error::bad_input(fmt::format("trace database '{}' does not exist or is not a file", path),
                            kOpenHint);
  }
  auto db = open_database(path, sql::Mode::read_only);
  if (!db) return db.error();
  auto version = db->query_int("PRAGMA user_version");
  if (!version) {
    return Error::bad_input(fmt::format("'{}' is not a SQLite trace database ({})", path,
                                        db->last_error()),
                            kOpenHint);
  }
  const int64_t found = version->value_or(0);
  if (found != kTraceSchemaVersion) {
    return Error::bad_input(
        fmt::format("'{}' has trace schema version {} (PRAGMA user_version); this build reads "
                    "version {}",
                    path, found, kTraceSchemaVersion),
        found == 0 ? kOpenHint
                   : "re-record the trace, or analyse it with the ingero-bench release that wrote it");
  }
  if (auto tables = check_tables(*db); !tables) return tables.error();
  return std::unique_ptr<TraceFile>(new TraceFile(std::move(db.value())));
}

Result<std::vector<OpInfo>> TraceFile::ops() const {
  auto stmt = db_.prepare("SELECT op, name, category FROM ops ORDER BY op");
  if (!stmt) return stmt.error();
  std::vector<OpInfo> ops;
  Status read = stmt->for_each_row([&](const sql::Statement& row) {
    ops.push_back({row.column_int(0), row.column_text(1), row.column_text(2)});
  });
  if (!read) return query_failed(db_, "ops");
  return ops;
}

Result<std::vector<RunRecord>> TraceFile::runs() const {
  auto stmt = db_.prepare(std::string(kRunColumns) + " ORDER BY run_id");
  if (!stmt) return stmt.error();
  std::vector<RunRecord> runs;
  Status read = stmt->for_each_row([&](const sql::Statement& row) { runs.push_back(read_run_row(row)); });
  if (!read) return query_failed(db_, "runs");
  return runs;
}

std::string TraceFile::run_id_list() const {
  auto stmt = db_.prepare("SELECT group_concat(run_id, ', ') FROM (SELECT run_id FROM runs ORDER BY run_id)");
  if (!stmt) return "none";
  auto row = stmt->step();
  if (!row || !*row || stmt->column_is_null(0)) return "none";
  return stmt->column_text(0);
}

Result<bool> TraceFile::run_has_events(int64_t run_id) const {
  auto stmt = db_.prepare("SELECT 1 FROM events WHERE run_id = ? LIMIT 1");
  if (!stmt) return stmt.error();
  stmt->bind(1, run_id);
  auto found = stmt->step();
  if (!found) return query_failed(db_, "events");
  return found;
}

Result<RunRecord> TraceFile::run(std::optional<int64_t> run_id) const {
  auto stmt = db_.prepare(std::string(kRunColumns) +
                           (run_id ? " WHERE run_id = ?" : " ORDER BY run_id DESC LIMIT 1"));
  if (!stmt) return stmt.error();
  if (run_id) stmt->bind(1, *run_id);
  auto found = stmt->step();
  if (!found) return query_failed(db_, "runs");
  if (!*found) {
    if (!run_id) {
      return Error::bad_input(fmt::format("'{}' holds no runs", path()),
                              "record one with 'ingero-bench run --db " + path() + "'");
    }
    return Error::bad_input(fmt::format("run {} is not in '{}'", *run_id, path()),
                            fmt::format("pass one of the run ids it holds: {}", run_id_list()));
  }
  RunRecord run = read_run_row(*stmt);
  auto has_events = run_has_events(run.run_id);
  if (!has_events) return has_events.error();
  if (!*has_events && run.result.is_null()) {
    return Error::bad_input(
        fmt::format("run {} in '{}' is empty: no events and no result record (status '{}')",
                    run.run_id, path(), run.status),
        "pick a finished run with --run ID, or re-record it (a run that is still 'running' has "
        "nothing to analyse yet)");
  }
  return run;
}

Result<RunContext> TraceFile::context(const RunRecord& run) const {
  RunContext context;
  context.run = run;
  Status read = read_run_rows(
      db_, "threads",
      "SELECT tid, pid, ppid, comm, role, start_ns, exit_ns FROM threads WHERE run_id = ? ORDER BY pid, tid",
      run.run_id, [&](const sql::Statement& row) {
        context.threads.push_back({row.column_int(0), row.column_int(1), row.column_optional_int(2),
                                   row.column_text(3), row.column_text(4), row.column_optional_int(5),
                                   row.column_optional_int(6)});
      });
  if (!read) return read.error();

  read = read_run_rows(
      db_, "thread_stats",
      "SELECT tid, pid, voluntary_switches, involuntary_switches, oncpu_ns, offcpu_ns, "
      "offcpu_max_ns, runq_count, runq_ns, page_allocs, page_alloc_bytes, page_faults "
      "FROM thread_stats WHERE run_id = ? ORDER BY pid, tid",
      run.run_id, [&](const sql::Statement& row) {
        ThreadStatsRecord s;
        ThreadCounters& c = s.counters;
        int64_t* fields[] = {&s.tid, &s.pid, &c.voluntary_switches, &c.involuntary_switches,
                             &c.oncpu_ns, &c.offcpu_ns, &c.offcpu_max_ns, &c.runq_count, &c.runq_ns,
                             &c.page_allocs, &c.page_alloc_bytes, &c.page_faults};
        for (int i = 0; i < 12; ++i) *fields[i] = row.column_int(i);
        context.thread_stats.push_back(s);
      });
  if (!read) return read.error();

  read = read_run_rows(
      db_, "histograms",
      "SELECT metric, pid, slot, count FROM histograms WHERE run_id = ? AND slot >= 0 AND slot < 64",
      run.run_id, [&](const sql::Statement& row) {
        auto& slots = context.histograms[row.column_text(0)][row.column_int(1)];
        const auto slot = static_cast<size_t>(row.column_int(2));
        if (slots.size() <= slot) slots.resize(slot + 1, 0);
        slots[slot] += row.column_int(3);
      });
  if (!read) return read.error();

  read = read_run_rows(db_, "run_settings", "SELECT key, value FROM run_settings WHERE run_id = ?", run.run_id,
                       [&](const sql::Statement& row) { context.settings[row.column_text(0)] = row.column_text(1); });
  if (!read) return read.error();

  read = read_run_rows(db_, "losses", "SELECT source, dropped FROM losses WHERE run_id = ?", run.run_id,
                       [&](const sql::Statement& row) { context.losses[row.column_text(0)] = row.column_int(1); });
  if (!read) return read.error();
  return context;
}

Result<EventSet> TraceFile::events(int64_t run_id, int threads) const {
  auto ops = this->ops();
  if (!ops) return ops.error();
  EventSet set;
  set.ops = std::move(ops.value());
  set.by_op.resize(set.ops.size());

  // A file holding only this run is scanned without decoding run_id; otherwise
  // each row is filtered on it (a table scan still beats an index walk that
  // fetches every row by rowid).
  auto first_run = db_.query_int("SELECT run_id FROM events ORDER BY run_id LIMIT 1");
  auto last_run = db_.query_int("SELECT run_id FROM events ORDER BY run_id DESC LIMIT 1");
  auto first_rowid = db_.query_int("SELECT min(rowid) FROM events");
  auto last_rowid = db_.query_int("SELECT max(rowid) FROM events");
  for (auto* r : {&first_run, &last_run, &first_rowid, &last_rowid}) {
    if (!*r) return r->error();
  }
  if (!first_rowid->has_value()) return set;
  const TableScan scan{run_id, **first_run == run_id && **last_run == run_id, **first_rowid, **last_rowid,
                       OpIndex(set.ops), std::max(1, threads)};

  std::vector<std::vector<EventList>> partial;
  if (auto read = read_events(db_, scan, partial); !read) return read.error();
  // Slices cover ascending rowid ranges, so their lists in slice order keep table order.
  for (size_t op = 0; op < set.ops.size(); ++op) {
    for (auto& slice_events : partial) {
      if (!slice_events[op].empty()) set.by_op[op].append(std::move(slice_events[op]));
    }
  }
  return set;
}

}  // namespace ingero::reports

// SPDX-License-Identifier: Apache-2.0
#include "reports/data/trace_data.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "common/json_text.h"
#include "common/proc_files.h"
#include "common/trace_contract.h"
#include "common/trace_schema.h"

namespace ingero::reports {

const char* const kTraceDbHint =
    "pass a trace DB written by 'ingero-bench --workload dataloader', 'ingero-bench sweep' or "
    "'ingero-bench trace' (--db PATH)";

namespace {

const EventList kNoEvents;

nlohmann::json parse_json_or_null(const std::optional<std::string>& text) {
  if (!text) return nullptr;
  auto parsed = parse_json_or_discarded(*text);  // capped nesting: a deep value would overflow the stack later
  return parsed.is_discarded() ? nlohmann::json(nullptr) : std::move(parsed);
}

// A point's cause in a file older than schema version 10, which stored only the words: told by the
// sentences those builds wrote (harness/sweep_engine.cc). The one place that reads them.
std::string cause_from_reason(std::string_view state, std::string_view reason) {
  namespace cause = contract::point_cause;
  const bool skipped = state == contract::point_state::kSkipped;
  if ((skipped || state == contract::point_state::kMeasured) && reason.find("budget") != std::string::npos)
    return std::string(cause::kBudget);
  if (skipped && reason.rfind("the same knobs as ", 0) == 0) return std::string(cause::kDuplicate);
  if (skipped && reason.rfind("off the coordinate search's path", 0) == 0) return std::string(cause::kOffPath);
  return "";
}

Error query_failed(const sql::Connection& db, const char* what) {
  return Error::bad_input(fmt::format("{}: cannot read {}: {}", db.path(), what, db.last_error()),
                          "the file is damaged or not an ingero-bench trace DB; " + std::string(kTraceDbHint));
}

// Calls on_row for each row of a query whose one parameter is the run id.
template <class OnRow>
Status read_run_rows(const sql::Connection& db, const char* table, const std::string& query, int64_t run_id,
                     OnRow&& on_row) {
  auto stmt = db.prepare(query);
  if (!stmt) return query_failed(db, table);
  stmt->bind(1, run_id);
  if (Status read = stmt->for_each_row(on_row); !read) return query_failed(db, table);
  return {};
}

Status check_tables(const sql::Connection& db) {
  for (const char* table : {"runs", "ops", "events", "threads", "thread_stats", "histograms", "losses",
                            "run_settings", "call_stats", "call_histograms", "sweeps", "sweep_points"}) {
    auto stmt = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
    if (!stmt) return query_failed(db, "the schema");
    stmt->bind(1, table);
    auto found = stmt->step();
    if (!found || !*found)
      return Error::bad_input(
          fmt::format("'{}' is not an ingero-bench trace DB: table '{}' is missing", db.path(), table), kTraceDbHint);
  }
  return {};
}

std::string this_host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

constexpr const char* kRunColumns =
    "SELECT run_id, label, kind, status, error, config_json, result_json, machine_json, targets_json, "
    "started_unix, start_ns, end_ns, root_pid, traced, coalesce(node, ''), sweep_id, coalesce(sweep_point, ''), "
    "coalesce(sweep_phase, ''), harness_pid, harness_start, command_json FROM runs";

// A command line stored as a JSON array of strings (other elements are skipped; not an array: none).
std::vector<std::string> string_array(const nlohmann::json& array) {
  std::vector<std::string> out;
  if (array.is_array())
    for (const auto& item : array)
      if (item.is_string()) out.push_back(item.get<std::string>());
  return out;
}

// The fields of stored JSON that readers take as typed values (nlohmann's typed reads throw, and no
// main catches): a file changed outside ingero-bench may hold another type there, which is bad input
// naming the file, the row and the column, rather than a crash later.
enum class Shape { number, boolean, string, strings, string_map, batches };
struct TypedField {
  const char* key;
  Shape shape;
};
constexpr TypedField kTypedConfigFields[] = {
    {"max_batches", Shape::number}, {"ranks", Shape::number},      {"samples", Shape::number},
    {"batch_size", Shape::number},  {"drop_last", Shape::boolean}, {"knobs", Shape::string_map},
    {"command", Shape::strings},
    // A sweep point's (sweep_command: the worker budget, the baseline's epoch cut; job_sweep).
    {"num_workers", Shape::number}, {"as_written", Shape::boolean},
};
constexpr TypedField kTypedResultFields[] = {
    {"status", Shape::string}, {"batches_truncated", Shape::boolean}, {"batches", Shape::batches},
    // The sweep's resume (a stopped run's reason) and the results table (a job's timing).
    {"error", Shape::string}, {"measured_steps", Shape::number}, {"steps_per_s", Shape::number}};
// What `runs --format benchmark` and worker health read of the machine.
constexpr TypedField kTypedMachineFields[] = {
    {"cpu_count", Shape::number}, {"memory_bytes", Shape::number}, {"hostname", Shape::string}};

bool has_shape(const nlohmann::json& v, Shape shape) {
  auto all = [&](auto&& ok) { return std::all_of(v.begin(), v.end(), ok); };
  switch (shape) {
    case Shape::number: return v.is_number();
    case Shape::boolean: return v.is_boolean();
    case Shape::string: return v.is_string();
    case Shape::strings: return v.is_array() && all([](const nlohmann::json& s) { return s.is_string(); });
    case Shape::string_map: return v.is_object() && all([](const nlohmann::json& s) { return s.is_string(); });
    case Shape::batches:
      return v.is_array() && all([](const nlohmann::json& b) {
               if (!b.is_object()) return false;
               for (const char* key : {"epoch", "wait_start_ns", "wait_ns", "compute_ns"})  // run_metrics reads these
                 if (auto f = b.find(key); f != b.end() && !f->is_number()) return false;
               return true;
             });
  }
  return false;
}

constexpr const char* shape_name(Shape shape) {
  switch (shape) {
    case Shape::number: return "a number";
    case Shape::boolean: return "true or false";
    case Shape::string: return "a string";
    case Shape::strings: return "an array of strings";
    case Shape::string_map: return "an object of strings";
    case Shape::batches: return "an array of batch objects with numbers";
  }
  return "?";
}

// The first typed field of `stored` (an object; anything else readers take as absent) that has
// another type, said as "'key' is X, not Y".
template <size_t N>
std::optional<std::string> mistyped_field(const nlohmann::json& stored, const TypedField (&fields)[N]) {
  if (!stored.is_object()) return std::nullopt;
  for (const TypedField& f : fields)
    if (auto it = stored.find(f.key); it != stored.end() && !has_shape(*it, f.shape))
      return fmt::format("'{}' is {}, not {}", f.key, it->type_name(), shape_name(f.shape));
  return std::nullopt;
}

Error damaged_value(const std::string& path, const std::string& row, const char* column, const std::string& what) {
  return Error::bad_input(fmt::format("'{}': {}'s {} is damaged: {}", path, row, column, what),
                          "the file was changed outside ingero-bench; record that run again into a new --db");
}

Status check_typed_fields(const std::string& path, const RunRecord& run) {
  const std::string row = fmt::format("run {}", run.run_id);
  if (auto bad = mistyped_field(run.config, kTypedConfigFields)) return damaged_value(path, row, "config_json", *bad);
  if (auto bad = mistyped_field(run.result, kTypedResultFields)) return damaged_value(path, row, "result_json", *bad);
  if (auto bad = mistyped_field(run.machine, kTypedMachineFields)) return damaged_value(path, row, "machine_json", *bad);
  return {};
}

RunRecord read_run_row(const sql::Statement& row) {
  RunRecord run;
  run.run_id = row.column_int(0);
  run.label = row.column_text(1);
  run.kind = row.column_text(2);
  run.status = row.column_text(3);
  run.error = row.column_text(4);
  run.config = parse_json_or_null(row.column_optional_text(5));
  run.result = parse_json_or_null(row.column_optional_text(6));
  run.machine = parse_json_or_null(row.column_optional_text(7));
  if (!run.machine.is_object()) run.machine = nlohmann::json::object();
  run.targets = parse_json_or_null(row.column_optional_text(8));
  run.started_unix = row.column_double(9);
  run.start_ns = row.column_int(10);
  run.end_ns = row.column_optional_int(11);
  run.root_pid = row.column_optional_int(12);
  run.traced = row.column_int(13) != 0;
  run.node = row.column_text(14);
  run.sweep_id = row.column_optional_int(15);
  run.sweep_point = row.column_text(16);
  run.sweep_phase = row.column_text(17);
  run.command = string_array(parse_json_or_null(row.column_optional_text(20)));
  // A run still 'running' whose writer is gone will never finish: say so (without writing).
  if (run.status == contract::status::kRunning && (run.node.empty() || run.node == this_host())) {
    auto pid = row.column_optional_int(18);
    auto start = row.column_optional_int(19);
    if (!pid || !start || !proc::is_alive(static_cast<pid_t>(*pid), static_cast<uint64_t>(*start))) {
      run.status = std::string(contract::status::kAbandoned);
      if (run.error.empty()) run.error = "the ingero-bench process writing it died before finishing it";
    }
  }
  return run;
}

// A group of call_stats rows summed (joined with ops as o), and how a row of them reads
// from column `first` on.
constexpr const char* kCallSums =
    "o.name, o.category, sum(c.calls), sum(c.returns), sum(c.errors), sum(c.total_ns), max(c.max_ns), "
    "sum(c.bytes), sum(c.streamed), sum(c.cut_calls)";
constexpr int kCallSumColumns = 10;

CallTotals read_call_sums(const sql::Statement& row, int first) {
  return {row.column_text(first),         row.column_text(first + 1),     row.column_int(first + 2),
          row.column_int(first + 3),      row.column_int(first + 4),      row.column_int(first + 5),
          row.column_int(first + 6),      row.column_int(first + 7),      row.column_int(first + 8),
          row.column_optional_int(first + 9), {},                         std::nullopt};
}

// A plain read-only open, or, where that fails (a WAL file whose directory this user
// cannot write), the file read as it is on disk.
Result<sql::Connection> open_read_only(const std::string& path, std::vector<std::string>& notes) {
  auto db = sql::open(path, sql::Mode::read_only, 5000);
  if (db) {
    auto version = schema::version_of(*db);
    if (version) return db;
    if (sqlite3_errcode(db->get()) == SQLITE_NOTADB) return version.error();
  }
  auto immutable = sql::open(path, sql::Mode::immutable, 0);
  if (!immutable) return Error::bad_input(immutable.error().message, kTraceDbHint);
  notes.push_back(
      "opened as an immutable file (its directory cannot be written here): a run still being written "
      "when it was copied may be missing its last events");
  return immutable;
}

// " AND ts_ns < ?n AND ts_ns + dur_ns > ?m" for the window parts that are set.
std::string window_clause(const std::optional<int64_t>& from, const std::optional<int64_t>& until, int first_param,
                          bool overlap) {
  std::string clause;
  if (until) clause += fmt::format(" AND ts_ns < ?{}", first_param);
  if (from) clause += overlap ? fmt::format(" AND ts_ns + dur_ns > ?{}", first_param + 1)
                              : fmt::format(" AND ts_ns >= ?{}", first_param + 1);
  return clause;
}

void bind_window(sql::Statement& stmt, const std::optional<int64_t>& from, const std::optional<int64_t>& until,
                 int first_param) {
  if (until) stmt.bind(first_param, *until);
  if (from) stmt.bind(first_param + 1, *from);
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
  io_count += other.io_count;
  io_bytes += other.io_bytes;
  io_ns += other.io_ns;
  iowait_count += other.iowait_count;
  iowait_ns += other.iowait_ns;
  cache_pages_added += other.cache_pages_added;
  return *this;
}

ThreadCounters total_counters(const std::vector<ThreadStatsRecord>& thread_stats) {
  ThreadCounters total;
  for (const auto& s : thread_stats) total += s.counters;
  return total;
}

const EventList& EventSet::of(std::string_view op) const {
  auto it = by_op.find(op);
  return it == by_op.end() ? kNoEvents : it->second;
}

size_t EventSet::total() const {
  size_t total = 0;
  for (const auto& [op, events] : by_op) total += events.size();
  return total;
}

Result<std::unique_ptr<TraceFile>> TraceFile::open(const std::string& path) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec))
    return Error::bad_input(fmt::format("trace database '{}' does not exist or is not a file", path), kTraceDbHint);
  std::vector<std::string> notes;
  auto db = open_read_only(path, notes);
  if (!db) return db.error();
  auto version = schema::version_of(*db);
  if (!version) return Error::bad_input(version.error().message, kTraceDbHint);
  if (*version == 0)
    return Error::bad_input(fmt::format("'{}' is a SQLite file without a trace schema version", path), kTraceDbHint);
  if (*version < contract::kOldestReadableSchema || *version > contract::kSchemaVersion)
    return Error::bad_input(fmt::format("'{}' has trace schema version {}; this build reads versions {} to {}", path,
                                        *version, contract::kOldestReadableSchema, contract::kSchemaVersion),
                            "analyse it with the ingero-bench release that wrote it");
  if (*version < contract::kSchemaVersion) {
    if (auto tables = db->query_int("SELECT count(*) FROM sqlite_master WHERE name = 'runs'"); !tables || **tables == 0)
      return Error::bad_input(fmt::format("'{}' is not an ingero-bench trace DB: table 'runs' is missing", path),
                              kTraceDbHint);
    auto copy = sql::copy_into_memory(*db);
    if (!copy) return copy.error();
    if (Status s = schema::upgrade(*copy, *version); !s)
      return Error::bad_input(fmt::format("'{}' (schema version {}) cannot be upgraded: {}", path, *version,
                                          s.error().message),
                              kTraceDbHint);
    notes.push_back(fmt::format("schema version {} file, read through an in-memory upgrade (the file is unchanged)",
                                *version));
    db = std::move(copy);
  }
  if (Status s = db->exec("PRAGMA query_only = ON"); !s) return s.error();
  if (Status s = check_tables(*db); !s) return s.error();
  return std::unique_ptr<TraceFile>(new TraceFile(std::move(*db), path, *version, std::move(notes)));
}

Result<std::vector<RunRecord>> TraceFile::runs() const {
  auto stmt = db_.prepare(std::string(kRunColumns) + " ORDER BY run_id");
  if (!stmt) return query_failed(db_, "runs");
  std::vector<RunRecord> runs;
  Status read = stmt->for_each_row([&](const sql::Statement& row) { runs.push_back(read_run_row(row)); });
  if (!read) return query_failed(db_, "runs");
  for (const RunRecord& run : runs)
    if (Status s = check_typed_fields(path(), run); !s) return s.error();
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
  if (!stmt) return query_failed(db_, "events");
  stmt->bind(1, run_id);
  auto found = stmt->step();
  if (!found) return query_failed(db_, "events");
  return *found;
}

// The newest run that is still being written, if any (0: none).
int64_t TraceFile::newest_running_run() const {
  auto stmt = db_.prepare("SELECT max(run_id) FROM runs WHERE status = ?");
  if (!stmt) return 0;
  stmt->bind(1, std::string(contract::status::kRunning));
  auto row = stmt->step();
  if (!row || !*row || stmt->column_is_null(0)) return 0;
  return stmt->column_int(0);
}

Result<RunRecord> TraceFile::run(std::optional<int64_t> run_id) const {
  // By default the newest finished run: one that another process is still writing has no
  // events yet, or only some of them.
  auto stmt = db_.prepare(std::string(kRunColumns) +
                          (run_id ? " WHERE run_id = ?" : " WHERE status <> ? ORDER BY run_id DESC LIMIT 1"));
  if (!stmt) return query_failed(db_, "runs");
  if (run_id) stmt->bind(1, *run_id);
  else stmt->bind(1, std::string(contract::status::kRunning));
  auto found = stmt->step();
  if (!found) return query_failed(db_, "runs");
  if (!*found) {
    if (!run_id) {
      if (const int64_t running = newest_running_run())
        return Error::bad_input(fmt::format("'{}' holds no finished run yet: run {} is still being written", path(),
                                            running),
                                fmt::format("wait for it to end, or pass --run {} for what it has so far", running));
      return Error::bad_input(fmt::format("'{}' holds no runs", path()),
                              fmt::format("record one with 'ingero-bench --workload dataloader --db {}'", path()));
    }
    return Error::bad_input(fmt::format("run {} is not in '{}'", *run_id, path()),
                            fmt::format("pass one of the run ids it holds: {}", run_id_list()));
  }
  RunRecord run = read_run_row(*stmt);
  if (Status s = check_typed_fields(path(), run); !s) return s.error();
  auto has_events = run_has_events(run.run_id);
  if (!has_events) return has_events.error();
  if (!*has_events && run.result.is_null())
    return Error::bad_input(fmt::format("run {} in '{}' is empty: no events and no result record (status '{}'{})",
                                        run.run_id, path(), run.status, run.error.empty() ? "" : ": " + run.error),
                            "pick a finished run with --run ID (ingero-bench runs --db FILE lists them)");
  return run;
}

Result<std::map<std::string, int64_t>> TraceFile::op_codes() const {
  auto stmt = db_.prepare("SELECT name, op FROM ops");
  if (!stmt) return query_failed(db_, "ops");
  std::map<std::string, int64_t> codes;
  if (Status s = stmt->for_each_row([&](const sql::Statement& row) { codes[row.column_text(0)] = row.column_int(1); });
      !s)
    return query_failed(db_, "ops");
  return codes;
}

namespace {

// The duty-cycled functions, each function's count estimate (its sampled processes' estimates
// plus the others' exact counts), and the probe hits per thread.
Status read_sampling_rows(const sql::Connection& db, int64_t run_id, RunContext& context) {
  Status read = read_run_rows(
      db, "call_sampling",
      "SELECT s.pid, o.name, s.since_ns, s.until_ns, s.windows, s.attached_ns, s.probed_calls, s.estimated_calls, "
      "s.estimated_low, s.estimated_high, s.rate_clock, s.trap_cost_scale FROM call_sampling s JOIN ops o ON o.op = s.op WHERE s.run_id = ? "
      "ORDER BY s.pid, o.name",
      run_id, [&](const sql::Statement& row) {
        context.sampled.push_back({row.column_int(0), row.column_text(1), row.column_int(2), row.column_int(3),
                                   row.column_int(4), row.column_int(5), row.column_int(6), row.column_int(7),
                                   row.column_int(8), row.column_optional_int(9),
                                   row.column_optional_text(10).value_or(""), row.column_optional_double(11)});
      });
  if (!read) return read;
  for (CallTotals& call : context.calls) {
    CountEstimate e{call.calls, call.calls, call.calls, 0};
    int64_t attached = 0, span = 0;
    bool sampled = false;
    for (const SampledCallRecord& r : context.sampled) {
      if (r.op != call.op) continue;
      sampled = true;
      e.calls += r.estimated_calls - r.probed_calls;
      e.low += r.estimated_low - r.probed_calls;
      e.high = r.estimated_high && e.high ? std::optional(*e.high + *r.estimated_high - r.probed_calls) : std::nullopt;
      attached += r.attached_ns;
      span += r.until_ns - r.since_ns;
    }
    if (!sampled) continue;
    call.estimate = count_estimate(e.calls, e.low, e.high,
                                   span > 0 ? static_cast<double>(attached) / static_cast<double>(span) : 1.0);
  }
  return read_run_rows(db, "call_stats",
                       "SELECT tid, pid, sum(calls), sum(returns) FROM call_stats WHERE run_id = ? GROUP BY tid, pid "
                       "ORDER BY pid, tid",
                       run_id, [&](const sql::Statement& row) {
                         context.thread_hits.push_back(
                             {row.column_int(0), row.column_int(1), row.column_int(2), row.column_int(3)});
                       });
}

// The probed calls of a duty-cycled function in a process stand for estimated / probed as many.
double sampled_scale(const RunContext& context, int64_t pid, const std::string& op) {
  for (const SampledCallRecord& r : context.sampled)
    if ((r.pid == pid || r.pid == 0) && r.op == op && r.probed_calls > 0)
      return static_cast<double>(count_estimate(r.estimated_calls, r.estimated_low, r.estimated_high, 1).calls) /
             static_cast<double>(r.probed_calls);
  return 1.0;
}

// What a user's job adds: the observer's DataLoaders, the GPUs' samples, and the time each
// thread spent in CUDA calls (what is not CPU work of its own; a duty-cycled function's time
// scaled up as its count is).
Status read_user_job_rows(const sql::Connection& db, int64_t run_id, RunContext& context) {
  Status read = read_run_rows(
      db, "call_stats",
      "SELECT c.tid, c.pid, o.name, c.total_ns FROM call_stats c JOIN ops o ON o.op = c.op WHERE c.run_id = ? "
      "AND o.category IN ('cuda_runtime', 'cuda_driver')",
      run_id, [&](const sql::Statement& row) {
        const double scale = sampled_scale(context, row.column_int(1), row.column_text(2));
        context.cuda_ns_by_tid[row.column_int(0)] +=
            static_cast<int64_t>(std::llround(static_cast<double>(row.column_int(3)) * scale));
      });
  if (!read) return read;
  read = read_run_rows(
      db, "loaders",
      "SELECT pid, loader, knobs_json, overrides_json, epochs, batches, wait_ns, workers_json FROM loaders "
      "WHERE run_id = ? ORDER BY batches DESC, pid, loader",
      run_id, [&](const sql::Statement& row) {
        auto parse = [&](int column) { return parse_json_or_null(row.column_optional_text(column)); };
        LoaderRecord l{row.column_int(0), row.column_int(1), parse(2), parse(3), row.column_int(4),
                       row.column_int(5), row.column_int(6), {}};
        if (!l.knobs.is_object()) l.knobs = nlohmann::json::object();
        const nlohmann::json workers = parse(7);
        if (workers.is_array())
          for (const auto& w : workers)
            if (w.is_number_integer()) l.workers.push_back(w.get<int64_t>());
        context.loaders.push_back(std::move(l));
      });
  if (!read) return read;
  read = read_run_rows(db, "gpus", "SELECT gpu, coalesce(name, '') FROM gpus WHERE run_id = ? ORDER BY gpu", run_id,
                       [&](const sql::Statement& row) { context.gpus.push_back({row.column_int(0), row.column_text(1)}); });
  if (!read) return read;
  return read_run_rows(db, "gpu_samples",
                       "SELECT gpu, ts_ns, metric, value FROM gpu_samples WHERE run_id = ? ORDER BY ts_ns, gpu", run_id,
                       [&](const sql::Statement& row) {
                         context.gpu_samples.push_back(
                             {row.column_int(0), row.column_int(1), row.column_text(2), row.column_double(3)});
                       });
}

}  // namespace

Result<RunContext> TraceFile::context(const RunRecord& run) const {
  RunContext context;
  context.run = run;
  Status read = read_run_rows(
      db_, "threads",
      "SELECT tid, pid, ppid, comm, role, start_ns, exit_ns, rank, exit_code FROM threads WHERE run_id = ? "
      "ORDER BY pid, tid",
      run.run_id, [&](const sql::Statement& row) {
        context.threads.push_back({row.column_int(0), row.column_int(1), row.column_optional_int(2),
                                   row.column_text(3), row.column_text(4), row.column_optional_int(5),
                                   row.column_optional_int(6), row.column_optional_int(7),
                                   row.column_optional_int(8)});
      });
  if (!read) return read.error();

  read = read_run_rows(
      db_, "thread_stats",
      "SELECT tid, pid, voluntary_switches, involuntary_switches, oncpu_ns, offcpu_ns, offcpu_max_ns, runq_count, "
      "runq_ns, page_allocs, page_alloc_bytes, page_faults, io_count, io_bytes, io_ns, iowait_count, iowait_ns, "
      "cache_pages_added FROM thread_stats "
      "WHERE run_id = ? ORDER BY pid, tid",
      run.run_id, [&](const sql::Statement& row) {
        ThreadStatsRecord s;
        ThreadCounters& c = s.counters;
        int64_t* fields[] = {&s.tid,          &s.pid,           &c.voluntary_switches, &c.involuntary_switches,
                             &c.oncpu_ns,     &c.offcpu_ns,     &c.offcpu_max_ns,      &c.runq_count,
                             &c.runq_ns,      &c.page_allocs,   &c.page_alloc_bytes,   &c.page_faults,
                             &c.io_count,     &c.io_bytes,      &c.io_ns,              &c.iowait_count,
                             &c.iowait_ns,    &c.cache_pages_added};
        for (int i = 0; i < static_cast<int>(std::size(fields)); ++i) *fields[i] = row.column_int(i);
        context.thread_stats.push_back(s);
      });
  if (!read) return read.error();

  read = read_run_rows(
      db_, "histograms", "SELECT metric, pid, slot, count FROM histograms WHERE run_id = ? AND slot >= 0 AND slot < 64",
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

  std::map<std::string, int64_t> losses;
  read = read_run_rows(db_, "losses", "SELECT source, dropped FROM losses WHERE run_id = ?", run.run_id,
                       [&](const sql::Statement& row) { losses[row.column_text(0)] = row.column_int(1); });
  if (!read) return read.error();
  if (!losses.empty() || !run.traced) context.losses = std::move(losses);

  read = read_run_rows(db_, "call_stats",
                       fmt::format("SELECT {} FROM call_stats c JOIN ops o ON o.op = c.op WHERE c.run_id = ? "
                                   "GROUP BY c.op ORDER BY sum(c.total_ns) DESC, o.name",
                                   kCallSums),
                       run.run_id, [&](const sql::Statement& row) { context.calls.push_back(read_call_sums(row, 0)); });
  if (!read) return read.error();
  read = read_run_rows(
      db_, "call_histograms",
      "SELECT o.name, h.slot, sum(h.count) FROM call_histograms h JOIN ops o ON o.op = h.op WHERE h.run_id = ? "
      "AND h.slot >= 0 AND h.slot < 64 GROUP BY h.op, h.slot",
      run.run_id, [&](const sql::Statement& row) {
        for (auto& call : context.calls) {
          if (call.op != row.column_text(0)) continue;
          const auto slot = static_cast<size_t>(row.column_int(1));
          if (call.histogram.size() <= slot) call.histogram.resize(slot + 1, 0);
          call.histogram[slot] += row.column_int(2);
        }
      });
  if (!read) return read.error();
  if (Status s = read_sampling_rows(db_, run.run_id, context); !s) return s.error();
  if (Status s = read_user_job_rows(db_, run.run_id, context); !s) return s.error();
  if (auto trainer = context.settings.find(std::string(contract::kTrainerCommandSetting));
      context.run.command.empty() && trainer != context.settings.end()) {
    context.run.command = string_array(parse_json_or_null(trainer->second));
  }
  return context;
}

Result<std::vector<SampledWindowRecord>> TraceFile::sampled_windows(int64_t run_id) const {
  std::vector<SampledWindowRecord> windows;
  Status read = read_run_rows(
      db_, "call_sampling_windows",
      "SELECT w.pid, o.name, w.start_ns, w.end_ns, w.calls FROM call_sampling_windows w JOIN ops o ON o.op = w.op "
      "WHERE w.run_id = ? ORDER BY w.pid, o.name, w.seq",
      run_id, [&](const sql::Statement& row) {
        windows.push_back({row.column_int(0), row.column_text(1), row.column_int(2), row.column_int(3),
                           row.column_int(4)});
      });
  if (!read) return read.error();
  return windows;
}

Result<std::vector<ProcessSampleRecord>> TraceFile::process_samples(int64_t run_id) const {
  std::vector<ProcessSampleRecord> samples;
  Status read = read_run_rows(
      db_, "process_samples",
      "SELECT pid, ts_ns, rss_bytes, pss_bytes, private_dirty_bytes, swap_bytes, fds, fd_limit, shm_size_bytes, "
      "shm_free_bytes, wchan FROM process_samples WHERE run_id = ? ORDER BY pid, ts_ns",
      run_id, [&](const sql::Statement& row) {
        ProcessSampleRecord r;
        r.pid = row.column_int(0);
        r.ts_ns = row.column_int(1);
        std::optional<int64_t>* fields[] = {&r.rss_bytes, &r.pss_bytes, &r.private_dirty_bytes, &r.swap_bytes,
                                            &r.fds,       &r.fd_limit,  &r.shm_size_bytes,      &r.shm_free_bytes};
        for (int i = 0; i < 8; ++i) *fields[i] = row.column_optional_int(2 + i);
        r.wchan = row.column_optional_text(10);
        samples.push_back(std::move(r));
      });
  if (!read) return read.error();
  return samples;
}

Result<std::vector<CopyOnWriteBytes>> TraceFile::copy_on_write_bytes(int64_t run_id) const {
  std::vector<CopyOnWriteBytes> buckets;
  Status read = read_run_rows(
      db_, "events",
      fmt::format("SELECT e.pid, max(e.ts_ns + e.dur_ns), sum(e.bytes) FROM events e JOIN ops o ON o.op = e.op "
                  "WHERE e.run_id = ? AND o.name = '{}' AND e.bytes IS NOT NULL "
                  "GROUP BY e.pid, (e.ts_ns + e.dur_ns) / {} ORDER BY e.pid, 2",
                  contract::op::kPageFaults, kCopyOnWriteBucketNs),
      run_id, [&](const sql::Statement& row) {
        buckets.push_back({row.column_int(0), row.column_int(1), row.column_int(2)});
      });
  if (!read) return read.error();
  return buckets;
}

Result<std::vector<EventStackRecord>> TraceFile::event_stacks(int64_t run_id, std::string_view op) const {
  // Each event's node, then its callers' nodes up to the outermost (depth 0: the innermost frame).
  auto stmt = db_.prepare(
      "WITH RECURSIVE chain(tid, ts_ns, stack_id, depth) AS ("
      " SELECT s.tid, s.ts_ns, s.stack_id, 0 FROM event_stacks s JOIN ops o ON o.op = s.op"
      " WHERE s.run_id = ?1 AND o.name = ?2"
      " UNION ALL SELECT c.tid, c.ts_ns, p.parent_id, c.depth + 1 FROM chain c JOIN profile_stacks p"
      " ON p.run_id = ?1 AND p.stack_id = c.stack_id WHERE p.parent_id IS NOT NULL AND c.depth < 256)"
      " SELECT c.tid, c.ts_ns, f.kind, f.name, f.file, f.line, f.line_kind FROM chain c"
      " JOIN profile_stacks p ON p.run_id = ?1 AND p.stack_id = c.stack_id"
      " JOIN profile_frames f ON f.run_id = ?1 AND f.frame_id = p.frame_id ORDER BY c.tid, c.ts_ns, c.depth");
  if (!stmt) return query_failed(db_, "event_stacks");
  stmt->bind(1, run_id).bind(2, op);
  std::vector<EventStackRecord> stacks;
  Status read = stmt->for_each_row([&](const sql::Statement& row) {
    const int64_t tid = row.column_int(0), ts = row.column_int(1);
    if (stacks.empty() || stacks.back().tid != tid || stacks.back().ts_ns != ts) stacks.push_back({tid, ts, {}});
    stacks.back().frames.push_back({row.column_text(2), row.column_text(3), row.column_text(4),
                                    row.column_optional_int(5), row.column_text(6)});
  });
  if (!read) return query_failed(db_, "event_stacks");
  return stacks;
}

Result<std::optional<int64_t>> TraceFile::largest_batch_bytes(int64_t run_id) const {
  std::optional<int64_t> largest;
  Status read = read_run_rows(db_, "events",
                              "SELECT max(e.bytes) FROM events e JOIN ops o ON o.op = e.op WHERE e.run_id = ? AND "
                              "o.name = 'batch_wait' AND e.bytes IS NOT NULL",
                              run_id, [&](const sql::Statement& row) { largest = row.column_optional_int(0); });
  if (!read) return read.error();
  return largest;
}

Result<std::vector<ProcessCallTotals>> TraceFile::process_calls(int64_t run_id, std::string_view category) const {
  auto stmt = db_.prepare(fmt::format(
      "SELECT c.pid, {}, max(s.estimated_calls), max(s.estimated_low), max(s.estimated_high), max(s.attached_ns), "
      "max(s.until_ns - s.since_ns), count(s.pid) FROM call_stats c JOIN ops o ON o.op = c.op "
      "LEFT JOIN call_sampling s ON s.run_id = c.run_id AND s.pid = c.pid AND s.op = c.op "
      "WHERE c.run_id = ?1 AND o.category = ?2 GROUP BY c.pid, c.op ORDER BY c.pid, sum(c.total_ns) DESC, o.name",
      kCallSums));
  if (!stmt) return query_failed(db_, "call_stats");
  stmt->bind(1, run_id).bind(2, category);
  std::vector<ProcessCallTotals> rows;
  Status read = stmt->for_each_row([&](const sql::Statement& row) {
    ProcessCallTotals p{row.column_int(0), read_call_sums(row, 1)};
    const int s = 1 + kCallSumColumns;  // the call_sampling columns
    if (row.column_int(s + 5) > 0) {
      const int64_t span = row.column_int(s + 4);
      p.totals.estimate = count_estimate(row.column_int(s), row.column_int(s + 1), row.column_optional_int(s + 2),
                                         span > 0 ? static_cast<double>(row.column_int(s + 3)) / span : 1.0);
    }
    rows.push_back(std::move(p));
  });
  if (!read) return query_failed(db_, "call_stats");
  return rows;
}

Result<std::vector<RunRanks>> TraceFile::ranked_runs() const {
  auto ranks = db_.prepare("SELECT DISTINCT run_id, rank FROM threads WHERE rank IS NOT NULL ORDER BY run_id, rank");
  if (!ranks) return query_failed(db_, "threads");
  std::vector<RunRanks> runs;
  Status read = ranks->for_each_row([&](const sql::Statement& row) {
    const int64_t run_id = row.column_int(0);
    if (runs.empty() || runs.back().run_id != run_id) runs.push_back({run_id, {}, std::nullopt});
    runs.back().ranks.push_back(row.column_int(1));
  });
  if (!read) return query_failed(db_, "threads");
  auto sizes = db_.prepare("SELECT run_id, value FROM run_settings WHERE key = ?1");
  if (!sizes) return query_failed(db_, "run_settings");
  sizes->bind(1, contract::kWorldSizeSetting);
  read = sizes->for_each_row([&](const sql::Statement& row) {
    auto run = std::find_if(runs.begin(), runs.end(), [&](const RunRanks& r) { return r.run_id == row.column_int(0); });
    const std::string value = row.column_text(1);
    if (run == runs.end() || value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string::npos)
      return;
    run->world_size = std::stoll(value);
  });
  if (!read) return query_failed(db_, "run_settings");
  return runs;
}

Result<EventSet> TraceFile::events(int64_t run_id, const EventFilter& filter) const {
  auto codes = op_codes();
  if (!codes) return codes.error();
  std::string sql = "SELECT ts_ns, dur_ns, tid, coalesce(arg, bytes, 0) FROM events WHERE run_id = ?1 AND op = ?2" +
                    window_clause(filter.from_ns, filter.until_ns, 3, true);
  nlohmann::json tids = filter.tids;
  if (!filter.tids.empty()) sql += " AND tid IN (SELECT value FROM json_each(?5))";
  if (filter.min_dur_ns) sql += " AND dur_ns >= ?6";
  sql += " ORDER BY ts_ns";
  auto stmt = db_.prepare(sql);
  if (!stmt) return query_failed(db_, "events");
  EventSet set;
  for (const std::string& op : filter.ops) {
    EventList& list = set.by_op[op];
    auto code = codes->find(op);
    if (code == codes->end()) continue;  // an op this file never defined has no events
    stmt->reset();
    stmt->bind(1, run_id).bind(2, code->second);
    bind_window(*stmt, filter.from_ns, filter.until_ns, 3);
    if (!filter.tids.empty()) stmt->bind(5, tids.dump());
    if (filter.min_dur_ns) stmt->bind(6, *filter.min_dur_ns);
    Status read = stmt->for_each_row([&](const sql::Statement& row) {
      list.push_back({row.column_int(0), row.column_int(1), row.column_int(2), row.column_int(3)});
    });
    if (!read) return query_failed(db_, "events");
  }
  return set;
}

Result<Timeline> TraceFile::timeline(int64_t run_id, const TimelineQuery& q) const {
  std::string sql =
      "SELECT o.name, o.category, e.ts_ns, e.dur_ns, e.pid, e.tid, e.ret, e.bytes, e.arg, e.stream FROM events e "
      "JOIN ops o ON o.op = e.op WHERE e.run_id = ?1";
  if (q.until_ns) sql += " AND e.ts_ns < ?2";
  if (q.from_ns) sql += " AND e.ts_ns + e.dur_ns > ?3";
  if (q.pid) sql += " AND e.pid = ?4";
  if (q.tid) sql += " AND e.tid = ?5";
  if (!q.categories.empty()) sql += " AND o.category IN (SELECT value FROM json_each(?6))";
  sql += " ORDER BY e.ts_ns LIMIT ?7";
  auto stmt = db_.prepare(sql);
  if (!stmt) return query_failed(db_, "events");
  stmt->bind(1, run_id);
  if (q.until_ns) stmt->bind(2, *q.until_ns);
  if (q.from_ns) stmt->bind(3, *q.from_ns);
  if (q.pid) stmt->bind(4, *q.pid);
  if (q.tid) stmt->bind(5, *q.tid);
  if (!q.categories.empty()) stmt->bind(6, nlohmann::json(q.categories).dump());
  stmt->bind(7, q.limit + 1);
  Timeline timeline;
  Status read = stmt->for_each_row([&](const sql::Statement& row) {
    timeline.events.push_back({row.column_text(0), row.column_text(1), row.column_int(2), row.column_int(3),
                               row.column_int(4), row.column_int(5), row.column_optional_int(6),
                               row.column_optional_int(7), row.column_optional_int(8), row.column_optional_int(9)});
  });
  if (!read) return query_failed(db_, "events");
  if (static_cast<int64_t>(timeline.events.size()) > q.limit) {
    timeline.events.resize(static_cast<size_t>(q.limit));
    timeline.truncated = true;
  }
  return timeline;
}

Result<std::optional<SweepRecord>> TraceFile::sweep(std::optional<int64_t> sweep_id) const {
  auto stmt = db_.prepare(std::string("SELECT sweep_id, status, request_json, rules_json, coalesce(baseline_point, ''), "
                                      "coalesce(recommended_point, ''), started_unix, ended_unix, harness_pid, "
                                      "harness_start FROM sweeps") +
                          (sweep_id ? " WHERE sweep_id = ?" : " ORDER BY sweep_id DESC LIMIT 1"));
  if (!stmt) return query_failed(db_, "sweeps");
  if (sweep_id) stmt->bind(1, *sweep_id);
  auto row = stmt->step();
  if (!row) return query_failed(db_, "sweeps");
  if (!*row) return std::optional<SweepRecord>();
  SweepRecord s;
  s.sweep_id = stmt->column_int(0);
  s.status = stmt->column_text(1);
  s.request = parse_json_or_null(stmt->column_optional_text(2));
  s.rules = parse_json_or_null(stmt->column_optional_text(3));
  s.baseline_point = stmt->column_text(4);
  s.recommended_point = stmt->column_text(5);
  s.started_unix = stmt->column_double(6);
  if (!stmt->column_is_null(7)) s.ended_unix = stmt->column_double(7);
  if (s.status == contract::sweep_status::kRunning) {
    auto pid = stmt->column_optional_int(8);
    auto start = stmt->column_optional_int(9);
    if (!pid || !start || !proc::is_alive(static_cast<pid_t>(*pid), static_cast<uint64_t>(*start)))
      s.status = std::string(contract::sweep_status::kAbandoned);
  }
  return std::optional<SweepRecord>(std::move(s));
}

Result<std::vector<SweepPointRecord>> TraceFile::sweep_points(int64_t sweep_id) const {
  std::vector<SweepPointRecord> points;
  Status read = read_run_rows(db_, "sweep_points",
                              "SELECT point, position, config_json, state, coalesce(reason, ''), cause "
                              "FROM sweep_points WHERE sweep_id = ? ORDER BY position",
                              sweep_id, [&](const sql::Statement& row) {
                                SweepPointRecord p{row.column_text(0), row.column_int(1),
                                                   parse_json_or_null(row.column_optional_text(2)),
                                                   row.column_text(3), row.column_text(4), ""};
                                auto cause = row.column_optional_text(5);
                                p.cause = cause ? *cause : cause_from_reason(p.state, p.reason);
                                points.push_back(std::move(p));
                              });
  if (!read) return read.error();
  for (const SweepPointRecord& p : points) {
    const std::string row = fmt::format("sweep {} point '{}'", sweep_id, p.point);
    if (!p.config.is_object())
      return damaged_value(path(), row, "config_json", fmt::format("it is {}, not an object", p.config.type_name()));
    if (auto bad = mistyped_field(p.config, kTypedConfigFields)) return damaged_value(path(), row, "config_json", *bad);
  }
  return points;
}

Result<std::vector<OpCount>> TraceFile::count_events(int64_t run_id, std::optional<int64_t> from_ns,
                                                     std::optional<int64_t> until_ns) const {
  auto ops = db_.prepare("SELECT op, name, category FROM ops ORDER BY op");
  if (!ops) return query_failed(db_, "ops");
  auto count = db_.prepare("SELECT count(*) FROM events WHERE run_id = ?1 AND op = ?2" +
                           window_clause(from_ns, until_ns, 3, false));
  if (!count) return query_failed(db_, "events");
  std::vector<OpCount> counts;
  Status read = ops->for_each_row([&](const sql::Statement& op) {
    count->reset();
    count->bind(1, run_id).bind(2, op.column_int(0));
    bind_window(*count, from_ns, until_ns, 3);
    auto row = count->step();
    if (row && *row && count->column_int(0) > 0)
      counts.push_back({op.column_text(1), op.column_text(2), count->column_int(0)});
  });
  if (!read) return query_failed(db_, "events");
  return counts;
}

Result<std::optional<int64_t>> TraceFile::last_event_end(int64_t run_id) const {
  auto stmt = db_.prepare("SELECT max(ts_ns + dur_ns) FROM events WHERE run_id = ?");
  if (!stmt) return query_failed(db_, "events");
  stmt->bind(1, run_id);
  auto row = stmt->step();
  if (!row) return query_failed(db_, "events");
  return *row ? stmt->column_optional_int(0) : std::nullopt;
}

Result<std::vector<int64_t>> TraceFile::durations(int64_t run_id, const std::string& op,
                                                  std::optional<int64_t> from_ns,
                                                  std::optional<int64_t> until_ns) const {
  auto stmt = db_.prepare("SELECT e.dur_ns FROM events e JOIN ops o ON o.op = e.op WHERE e.run_id = ?1 AND "
                          "o.name = ?2" + window_clause(from_ns, until_ns, 3, false));
  if (!stmt) return query_failed(db_, "events");
  stmt->bind(1, run_id).bind(2, op);
  bind_window(*stmt, from_ns, until_ns, 3);
  std::vector<int64_t> values;
  if (Status s = stmt->for_each_row([&](const sql::Statement& row) { values.push_back(row.column_int(0)); }); !s)
    return query_failed(db_, "events");
  return values;
}

}  // namespace ingero::reports

namespace ingero::reports {

std::vector<int64_t> ProfileRecord::frames_of(int64_t stack_id) const {
  std::vector<int64_t> out;
  std::optional<int64_t> id = stack_id;
  while (id && out.size() <= stacks.size()) {  // a cycle in a damaged file ends here
    auto node = stacks.find(*id);
    if (node == stacks.end()) break;
    out.push_back(node->second.frame_id);
    id = node->second.parent_id;
  }
  return out;
}

Result<ProfileRecord> TraceFile::profile(int64_t run_id, std::optional<int64_t> from_ns,
                                         std::optional<int64_t> until_ns) const {
  ProfileRecord profile;
  auto samples = db_.prepare(fmt::format(
      "SELECT tid, stack_id, bucket_ns, samples FROM profile_samples WHERE run_id = ?1{}{} AND samples > 0 "
      "ORDER BY bucket_ns, tid, stack_id",
      until_ns ? " AND bucket_ns < ?2" : "", from_ns ? " AND bucket_ns >= ?3" : ""));
  if (!samples) return query_failed(db_, "profile_samples");
  samples->bind(1, run_id);
  if (until_ns) samples->bind(2, *until_ns);
  if (from_ns) samples->bind(3, *from_ns);
  Status read = samples->for_each_row([&](const sql::Statement& row) {
    profile.samples.push_back({row.column_int(0), row.column_int(1), row.column_int(2), row.column_int(3)});
  });
  if (!read) return query_failed(db_, "profile_samples");
  auto events = db_.prepare(fmt::format(
      "SELECT s.tid, s.ts_ns, o.name, s.stack_id FROM event_stacks s JOIN ops o ON o.op = s.op "
      "WHERE s.run_id = ?1{}{}",
      until_ns ? " AND s.ts_ns < ?2" : "", from_ns ? " AND s.ts_ns >= ?3" : ""));
  if (!events) return query_failed(db_, "event_stacks");
  events->bind(1, run_id);
  if (until_ns) events->bind(2, *until_ns);
  if (from_ns) events->bind(3, *from_ns);
  read = events->for_each_row([&](const sql::Statement& row) {
    profile.event_stacks[{row.column_int(0), row.column_int(1), row.column_text(2)}] = row.column_int(3);
  });
  if (!read) return query_failed(db_, "event_stacks");
  if (profile.samples.empty() && profile.event_stacks.empty()) return profile;
  read = read_run_rows(db_, "profile_frames",
                       "SELECT frame_id, kind, name, file, line, line_kind FROM profile_frames WHERE run_id = ?",
                       run_id, [&](const sql::Statement& row) {
                         profile.frames[row.column_int(0)] = {row.column_text(1), row.column_text(2),
                                                              row.column_text(3), row.column_optional_int(4),
                                                              row.column_text(5)};
                       });
  if (!read) return read.error();
  read = read_run_rows(db_, "profile_stacks",
                       "SELECT stack_id, parent_id, frame_id FROM profile_stacks WHERE run_id = ?", run_id,
                       [&](const sql::Statement& row) {
                         profile.stacks[row.column_int(0)] = {row.column_optional_int(1), row.column_int(2)};
                       });
  if (!read) return read.error();
  return profile;
}

}  // namespace ingero::reports

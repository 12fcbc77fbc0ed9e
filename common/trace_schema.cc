// SPDX-License-Identifier: Apache-2.0
#include "common/trace_schema.h"

#include <fmt/format.h>

#include "common/schema_sql.h"
#include "common/trace_contract.h"

namespace ingero::schema {

namespace {

constexpr const char* kNewFileHint = "pass a new file name, or an existing ingero-bench trace DB";

// Columns version 2 added to tables that version 1 already had.
constexpr const char* kColumnsAddedInV2 = R"(
ALTER TABLE runs ADD COLUMN error TEXT;
ALTER TABLE runs ADD COLUMN targets_json TEXT;
ALTER TABLE runs ADD COLUMN user TEXT;
ALTER TABLE runs ADD COLUMN node TEXT;
ALTER TABLE runs ADD COLUMN harness_pid INTEGER;
ALTER TABLE runs ADD COLUMN harness_start INTEGER;
ALTER TABLE runs ADD COLUMN sweep_id INTEGER;
ALTER TABLE runs ADD COLUMN sweep_point TEXT;
ALTER TABLE runs ADD COLUMN sweep_phase TEXT;
ALTER TABLE threads ADD COLUMN rank INTEGER;
ALTER TABLE threads ADD COLUMN uid INTEGER;
DROP TABLE IF EXISTS causal_chains;
)";

// Columns version 5 added (I/O wait and page-cache reads per thread); NULL in a trace recorded
// before them, where they were not measured.
constexpr const char* kColumnsAddedInV5 = R"(
ALTER TABLE thread_stats ADD COLUMN iowait_count INTEGER;
ALTER TABLE thread_stats ADD COLUMN iowait_ns INTEGER;
ALTER TABLE thread_stats ADD COLUMN cache_pages_added INTEGER;
)";

// call_sampling (version 4 on) says which clock its rates were taken on from version 6.
constexpr const char* kColumnsAddedInV6 = "ALTER TABLE call_sampling ADD COLUMN rate_clock TEXT;";

// ... and what the traps were measured to cost the job from version 8: the scale on call_sampling
// (version 4 on), the return probe's program time on call_sampling_windows (version 7 on).
constexpr const char* kSamplingColumnAddedInV8 = "ALTER TABLE call_sampling ADD COLUMN trap_cost_scale REAL;";
constexpr const char* kWindowColumnsAddedInV8 = R"(
ALTER TABLE call_sampling_windows ADD COLUMN return_program_runs INTEGER;
ALTER TABLE call_sampling_windows ADD COLUMN return_program_ns INTEGER;
)";

// ... and the calls a duty cycle's window edges kept from being timed, from version 9 (call_stats
// exists from version 2; a version-1 file gets it from the schema).
constexpr const char* kCallStatsColumnAddedInV9 = "ALTER TABLE call_stats ADD COLUMN cut_calls INTEGER;";

// ... and a sweep point's skip cause from version 10 (sweep_points exists from version 2; a version-1
// file gets it from the schema). The reader derives an older point's cause from its reason.
constexpr const char* kSweepPointColumnAddedInV10 = "ALTER TABLE sweep_points ADD COLUMN cause TEXT;";

// Version 1 stored every probed call as an event: its totals are those events.
constexpr const char* kCallStatsFromV1Events = R"(
INSERT INTO call_stats(run_id, tid, pid, op, calls, returns, errors, total_ns, max_ns, bytes, streamed)
SELECT run_id, tid, pid, op, count(*), count(*), sum(coalesce(ret, 0) != 0), sum(dur_ns), max(dur_ns),
       coalesce(sum(bytes), 0), count(*)
FROM events WHERE op IN (SELECT op FROM ops WHERE category IN ('cuda_runtime', 'cuda_driver', 'nccl'))
GROUP BY run_id, tid, op;
)";

Status insert_missing_ops(const sql::Connection& db) {
  auto insert = db.prepare("INSERT OR IGNORE INTO ops(op, name, category) VALUES(?, ?, ?)");
  if (!insert) return insert.error();
  for (const contract::OpInfo& op : contract::kOps) {
    if (op.code == IB_OP_NONE) continue;
    if (Status s = insert->bind(1, int64_t{op.code}).bind(2, op.name).bind(3, op.category).run(); !s) return s;
  }
  return {};
}

// Every op this build writes must have the same code in the file.
Status check_ops_agree(const sql::Connection& db) {
  auto stmt = db.prepare("SELECT op, name FROM ops");
  if (!stmt) return stmt.error();
  std::string disagreement;
  Status read = stmt->for_each_row([&](const sql::Statement& row) {
    auto code = contract::op_code(row.column_text(1));
    if (code && *code != row.column_int(0) && disagreement.empty())
      disagreement = fmt::format("op '{}' has code {} in the file but {} in this build", row.column_text(1),
                                 row.column_int(0), *code);
  });
  if (!read) return read;
  if (!disagreement.empty())
    return Error::bad_input(fmt::format("{} was written by an incompatible ingero-bench build: {}", db.path(),
                                        disagreement),
                            "record into a new --db file");
  return {};
}

Status create_fresh(const sql::Connection& db) {
  auto tables = db.query_int("SELECT count(*) FROM sqlite_master");
  if (!tables) return tables.error();
  if (tables->value_or(0) != 0)
    return Error::bad_input(fmt::format("{} is a SQLite database but not an ingero-bench trace DB "
                                        "(no schema version, {} other objects)",
                                        db.path(), **tables),
                            kNewFileHint);
  if (Status s = db.exec(kSchemaSql); !s) return s;
  if (Status s = insert_missing_ops(db); !s) return s;
  return db.exec(fmt::format("PRAGMA user_version = {}", contract::kSchemaVersion));
}

// Version-1 op codes were positions in another list: map them to this build's by name.
Status renumber_v1_ops(const sql::Connection& db) {
  if (Status s = db.exec("CREATE TEMP TABLE op_renumbering(old INTEGER PRIMARY KEY, new INTEGER)"); !s) return s;
  auto map = db.prepare("INSERT INTO op_renumbering SELECT op, ? FROM main.ops WHERE name = ?");
  if (!map) return map.error();
  for (const contract::OpInfo& op : contract::kOps)
    if (Status s = map->bind(1, int64_t{op.code}).bind(2, op.name).run(); !s) return s;
  // Ops version 2 no longer has were never written as events (page_fault was declared only).
  return db.exec(
      "DELETE FROM events WHERE op NOT IN (SELECT old FROM op_renumbering);"
      "UPDATE events SET op = (SELECT new FROM op_renumbering WHERE old = events.op);"
      "DELETE FROM ops;"
      "DROP TABLE temp.op_renumbering;");
}

}  // namespace

Result<int> version_of(const sql::Connection& db) {
  auto version = db.query_int("PRAGMA user_version");
  if (!version) {
    if (sqlite3_errcode(db.get()) == SQLITE_NOTADB)
      return Error::bad_input(fmt::format("{} is not a SQLite database, so not an ingero-bench trace DB", db.path()),
                              kNewFileHint);
    return version.error();
  }
  return static_cast<int>(version->value_or(0));
}

// Versions 2 -> 3, 3 -> 4 and 6 -> 7 only added tables (loaders, gpus, gpu_samples; call_sampling;
// call_sampling_windows), which the schema creates; 4 -> 5 added columns to thread_stats, 5 -> 6 one
// to call_sampling, 7 -> 8 one to call_sampling and two to call_sampling_windows, 8 -> 9 one to
// call_stats; 9 -> 10 added tables again (profile_frames, profile_stacks, profile_samples,
// process_samples) and one column to sweep_points; 10 -> 11 added a table (event_stacks).
Status upgrade(const sql::Connection& db, int from_version) {
  auto txn = sql::Transaction::begin(db.get());
  if (!txn) return txn.error();
  if (from_version == 1) {
    if (Status s = db.exec(kColumnsAddedInV2); !s) return s;
    if (Status s = renumber_v1_ops(db); !s) return s;
  }
  if (from_version < 5)
    if (Status s = db.exec(kColumnsAddedInV5); !s) return s;
  if (from_version >= 4 && from_version < 6)
    if (Status s = db.exec(kColumnsAddedInV6); !s) return s;
  if (from_version >= 4 && from_version < 8)
    if (Status s = db.exec(kSamplingColumnAddedInV8); !s) return s;
  if (from_version == 7)
    if (Status s = db.exec(kWindowColumnsAddedInV8); !s) return s;
  if (from_version >= 2 && from_version < 9)
    if (Status s = db.exec(kCallStatsColumnAddedInV9); !s) return s;
  if (from_version >= 2 && from_version < 10)
    if (Status s = db.exec(kSweepPointColumnAddedInV10); !s) return s;
  if (Status s = db.exec(kSchemaSql); !s) return s;
  if (Status s = insert_missing_ops(db); !s) return s;
  if (from_version == 1)
    if (Status s = db.exec(kCallStatsFromV1Events); !s) return s;
  if (Status s = db.exec(fmt::format("PRAGMA user_version = {}", contract::kSchemaVersion)); !s) return s;
  return txn->commit();
}

Status create_or_upgrade(const sql::Connection& db) {
  auto version = version_of(db);
  if (!version) return version.error();
  if (*version == contract::kSchemaVersion) {
    if (Status s = check_ops_agree(db); !s) return s;
    return insert_missing_ops(db);
  }
  if (*version >= contract::kOldestReadableSchema && *version < contract::kSchemaVersion)
    return upgrade(db, *version);
  if (*version != 0)
    return Error::bad_input(fmt::format("{} is a trace DB of schema version {}; this build reads versions {} to {}",
                                        db.path(), *version, contract::kOldestReadableSchema,
                                        contract::kSchemaVersion),
                            "use a new --db file, or the ingero-bench build that wrote it");
  auto txn = sql::Transaction::begin(db.get());
  if (!txn) return txn.error();
  // Another connection may have created the schema between the check and the lock.
  auto again = version_of(db);
  if (!again) return again.error();
  if (*again == 0)
    if (Status s = create_fresh(db); !s) return s;
  return txn->commit();
}

}  // namespace ingero::schema

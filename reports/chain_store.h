// The derived table causal_chains, owned by reports/: the chains of the last
// explain of each run (and window), replaced on every explain.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "reports/causal_chains.h"

namespace ingero::reports {

inline constexpr const char* kCausalChainsTable = R"(
CREATE TABLE IF NOT EXISTS causal_chains (
  run_id          INTEGER NOT NULL,
  since_s         REAL,              -- NULL: the whole run
  rank            INTEGER NOT NULL,
  severity        TEXT NOT NULL,     -- HIGH | MEDIUM | LOW
  victim          TEXT NOT NULL,     -- slow op: CUDA function or batch_wait
  cause           TEXT NOT NULL,     -- e.g. worker.on_cpu, main.cpu_wait
  cause_label     TEXT NOT NULL,
  calls_explained INTEGER NOT NULL,
  victim_calls    INTEGER NOT NULL,
  lost_ns         INTEGER NOT NULL,
  victim_ns       INTEGER NOT NULL,
  share_of_victim REAL NOT NULL,
  share_of_window REAL NOT NULL,
  summary         TEXT NOT NULL,
  root_cause      TEXT NOT NULL,
  recommendation  TEXT NOT NULL,
  timeline_json   TEXT NOT NULL,
  evidence_json   TEXT NOT NULL,
  thresholds_json TEXT NOT NULL,
  analyzed_unix   REAL NOT NULL
))";

// Opens its own read-write connection; the analysis connection stays read-only.
Status store_chains(const std::string& db_path, int64_t run_id, std::optional<double> since_s,
                    const ChainAnalysis& analysis);

}  // namespace ingero::reports

#include "reports/chain_store.h"

#include <chrono>

#include <fmt/format.h>

#include "reports/report_json.h"
#include "reports/trace_data.h"

namespace ingero::reports {

Status store_chains(const std::string& db_path, int64_t run_id, std::optional<double> since_s,
                    const ChainAnalysis& analysis) {
  auto db = open_database(db_path, sql::Mode::read_write);
  if (!db) return db.error();
  if (auto created = db->exec(kCausalChainsTable); !created) return created.error();
  auto transaction = sql::Transaction::begin(db->get());
  if (!transaction) return transaction.error();
  auto remove = db->prepare("DELETE FROM causal_chains WHERE run_id = ? AND since_s IS ?");
  if (!remove) return remove.error();
  auto insert = db->prepare(
      "INSERT INTO causal_chains VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.error();
  const auto store_failed = [&] {
    return Error::failure(fmt::format("{}: cannot store causal chains: {}", db_path, db->last_error()));
  };
  if (!remove->bind(1, run_id).bind(2, since_s).run()) return store_failed();
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string thresholds = to_json(analysis.thresholds).dump();
  for (const auto& c : analysis.chains) {
    insert->bind(1, run_id).bind(2, since_s).bind(3, int64_t{c.rank}).bind(4, c.severity).bind(5, c.victim);
    insert->bind(6, c.cause.code()).bind(7, c.cause_label).bind(8, c.calls_explained).bind(9, c.victim_calls);
    insert->bind(10, c.lost_ns).bind(11, c.victim_ns).bind(12, c.share_of_victim).bind(13, c.share_of_window);
    insert->bind(14, c.summary).bind(15, c.root_cause).bind(16, c.recommendation);
    insert->bind(17, nlohmann::json(c.timeline).dump()).bind(18, to_json(c.evidence).dump());
    insert->bind(19, thresholds).bind(20, now);
    if (!insert->run()) return store_failed();
  }
  return transaction->commit();
}

}  // namespace ingero::reports

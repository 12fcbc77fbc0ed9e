// SPDX-License-Identifier: Apache-2.0
#include "reports/text/compare_text.h"

#include <cmath>

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "reports/text/chain_text.h"
#include "reports/text/format.h"

namespace ingero::reports {
namespace {

std::string signed_seconds(double seconds) {
  return (seconds >= 0 ? "+" : "−") + format_seconds(std::fabs(seconds));
}

}  // namespace

std::string basis_text(CompareBasis basis) {
  return basis == CompareBasis::per_epoch ? "per measured epoch (median epoch; wait and compute averaged per epoch)"
                                          : "whole run (from batch_wait / batch_compute events)";
}

std::string component_name(const ComponentRow& row) {
  switch (row.kind) {
    case ComponentKind::waiting: return "waiting for data";
    case ComponentKind::wait_cause:
      return cause_label(row.cause, std::string(contract::op::kBatchWait), true, row.run_has_producers);
    case ComponentKind::compute: return "compute (copy to device + model)";
    case ComponentKind::other: return "other (loop overhead, epoch set-up)";
  }
  return "";
}

std::vector<std::string> explanation_lines(const CompareReport& r) {
  if (!r.comparable()) return {"not enough timings to compare"};
  std::vector<std::string> lines = {fmt::format("run {} takes {} as long as run {} ({}: {} vs {}); difference {}",
                                                r.b.run_id, format_ratio(r.total_b_s / r.total_a_s), r.a.run_id,
                                                basis_text(r.basis), format_seconds(r.total_b_s),
                                                format_seconds(r.total_a_s), signed_seconds(r.total_b_s - r.total_a_s))};
  for (size_t i : r.explained) {
    const ComponentRow& c = r.components[i];
    lines.push_back(fmt::format("{}{}: {} ({} of the difference)", c.part_of_wait() ? "  of which " : "",
                                component_name(c), signed_seconds(c.delta_s()), format_percent(c.share_of_delta)));
  }
  return lines;
}

}  // namespace ingero::reports

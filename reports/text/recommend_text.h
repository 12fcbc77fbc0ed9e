// SPDX-License-Identifier: Apache-2.0
// The words of a recommendation, made from its numbers and kinds (reports/analysis/recommend.h): the
// headline, the reasons, the flags, what was not measured, the noise rule and the baseline's
// evidence. The one text layer for recommend: the terminal, Markdown/HTML, JSON and MCP answers
// all take theirs from here.
#pragma once

#include <string>
#include <vector>

#include "reports/analysis/recommend.h"

namespace ingero::reports {

// "oversubscribed: 8 workers on 4 cores", "high run-queue latency: p99 in [2048, 4096) µs",
// "does not shuffle".
std::string flag_text(const ConfigFlag& flag);
std::vector<std::string> flag_texts(const std::vector<ConfigFlag>& flags);

// "Use loader w4. Measured 3× faster than loader w0 (...)", with what bounded the epochs, the
// budget that would measure an alternative and the change the baseline's chains suggest.
std::string headline_text(const RecommendReport& report);
// One sentence per reason that has words (an unknown mode's change has none).
std::vector<std::string> reason_lines(const RecommendReport& report);
// "loader w8: pruned — slower ...", or one line for a group skipped alike.
std::vector<std::string> not_measured_lines(const RecommendReport& report);
std::string noise_rule_text(const NoiseRule& rule);
// "run 1 waited for data 80.0 % of the time: HIGHLY input-bound", then "[HIGH] summary — root cause".
std::vector<std::string> baseline_evidence_lines(const RecommendReport& report);
// "DataLoader(..., num_workers=12, persistent_workers=True), as your command sets it: ...".
std::string dataloader_change_text(const LoaderChange& change);

}  // namespace ingero::reports

// SPDX-License-Identifier: Apache-2.0
// `ingero-bench explain | compare | recommend`: the reports of reports/documents/trace_reports.h, printed
// as text or JSON.
#pragma once

#include <ostream>

#include "common/result.h"
#include "reports/documents/trace_reports.h"

namespace ingero::reports {

Status explain(const ExplainOptions& options, std::ostream& out);
Status compare(const CompareOptions& options, std::ostream& out);
Status recommend(const RecommendOptions& options, std::ostream& out);

}  // namespace ingero::reports

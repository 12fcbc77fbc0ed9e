// SPDX-License-Identifier: Apache-2.0
// Terminal renderings of the report structs (the same structs the JSON renderer writes).
#pragma once

#include <ostream>

#include "reports/analysis/compare.h"
#include "reports/documents/explain.h"
#include "reports/analysis/recommend.h"

namespace ingero::reports {

void render_text(const ExplainReport& report, std::ostream& out);
void render_text(const CompareReport& report, std::ostream& out);
void render_text(const RecommendReport& report, std::ostream& out);

}  // namespace ingero::reports

// SPDX-License-Identifier: Apache-2.0
#include "mcp/tool_schemas.h"

#include "reports/render/report_json.h"

namespace ingero::mcp::schemas {

// Each the schema of what its writer in reports/ writes, from the same list of fields.
json run_header() { return reports::run_header_schema(); }
json metrics() { return reports::metrics_schema(); }
json tracing_cost() { return reports::tracing_cost_schema(); }
json call_row() { return reports::call_row_schema(); }
json process_row() { return reports::process_row_schema(); }
json causal_chain() { return reports::causal_chain_schema(); }
json profile() { return reports::profile_schema(); }
json slow_interval_summary() { return reports::slow_interval_schema(); }
json chain_thresholds() { return reports::chain_thresholds_schema(); }
json compare_report() { return reports::compare_report_schema(); }
json recommend_report() { return reports::recommend_report_schema(); }

}  // namespace ingero::mcp::schemas

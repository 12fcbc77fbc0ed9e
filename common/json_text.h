// SPDX-License-Identifier: Apache-2.0
// Every parse of JSON text that comes from outside this process (a file, a DB column, an MCP
// client, a workload's record) goes through here. nlohmann::json parses without recursion,
// but copying, comparing, printing and walking a value recurse once per level, so a value
// nested 100,000 deep would overflow the stack later. The nesting is capped before parsing.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace ingero {

// Deeper than any record, configuration or message ingero-bench reads; far below what
// overflows an 8 MB stack.
inline constexpr int kMaxJsonDepth = 256;

// Whether arrays and objects in text nest deeper than limit (strings skipped; no parsing).
bool json_nested_deeper_than(std::string_view text, int limit);

// The parsed value, or bad input saying why ("nested deeper than 256 levels", or the
// parser's message with the byte offset). The message does not name the source: callers do.
Result<nlohmann::json> parse_json(std::string_view text, int max_depth = kMaxJsonDepth);

// The parsed value, or a discarded one (is_discarded()) for text that is not JSON or nests too deep.
nlohmann::json parse_json_or_discarded(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace ingero

// SPDX-License-Identifier: Apache-2.0
#include "common/json_text.h"

#include <fmt/format.h>

namespace ingero {

bool json_nested_deeper_than(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

Result<nlohmann::json> parse_json(std::string_view text, int max_depth) {
  if (json_nested_deeper_than(text, max_depth))
    return Error::bad_input(fmt::format("the JSON nests arrays and objects deeper than {} levels", max_depth),
                            "send or store JSON nested less deeply");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Error::bad_input(fmt::format("not valid JSON: {}", e.what()));
  }
}

nlohmann::json parse_json_or_discarded(std::string_view text, int max_depth) {
  if (json_nested_deeper_than(text, max_depth)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace ingero

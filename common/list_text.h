// SPDX-License-Identifier: Apache-2.0
// The two pieces every small parser of flags, overrides and environment values needs: a list split at
// its commas ("0,2,4") and a whole number written in decimal digits only ("12"; no sign, space or
// suffix). Each caller words its own error; these only say whether the text is one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ingero {

// "1,2,4" -> {"1", "2", "4"}; "" -> {""}; "1," -> {"1", ""}: empty items are kept for the caller to refuse.
std::vector<std::string> split_list(std::string_view text, char separator = ',');

// The value of a text of decimal digits only, at most `max`; none for anything else (empty, a sign,
// spaces, other characters, or too large).
std::optional<uint64_t> parse_digits(std::string_view text, uint64_t max = UINT64_MAX);

}  // namespace ingero

// SPDX-License-Identifier: Apache-2.0
#include "common/list_text.h"

#include <charconv>

namespace ingero {

std::vector<std::string> split_list(std::string_view text, char separator) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    items.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return items;
    start = end + 1;
  }
}

std::optional<uint64_t> parse_digits(std::string_view text, uint64_t max) {
  if (text.empty()) return std::nullopt;
  for (const char ch : text)
    if (ch < '0' || ch > '9') return std::nullopt;  // digits only: no sign, space or suffix
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value > max) return std::nullopt;
  return value;
}

}  // namespace ingero

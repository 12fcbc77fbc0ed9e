// SPDX-License-Identifier: Apache-2.0
// Errors about one command-line input, for the commands that write files (report, export).
#pragma once

#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "common/result.h"

namespace ingero::reports {

// The same error, its message prefixed with the flag whose value caused it ("--run: run 99 is not in
// 'x.db'"), so that the user knows which input to change; the exit code and hint are kept.
inline Error with_flag(std::string_view flag, Error error) {
  error.message = fmt::format("{}: {}", flag, error.message);
  return error;
}

}  // namespace ingero::reports

// Whole-file writes that never leave a half-written file behind: write to a
// temporary file in the same directory, fsync, then rename over the target.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace ingero {

// Creates missing parent directories. The temporary file is removed on failure.
Status write_file_atomically(const std::string& path, std::string_view contents);

// Reads a whole file; a missing or unreadable file is bad input naming the path.
Result<std::string> read_file(const std::string& path);

}  // namespace ingero

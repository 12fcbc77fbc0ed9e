// SPDX-License-Identifier: Apache-2.0
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

// Checks, before any work, that a file can later be written at path: its directory exists
// or can be created, and is writable. Bad input naming the flag otherwise.
Status check_writable_path(const std::string& flag, const std::string& path);
// The same for a folder that files will be written into.
Status check_writable_dir(const std::string& flag, const std::string& dir);

// A fresh directory only this user can enter (mode 0700), removed with everything in it
// when the owner goes, unless keep() was called.
class PrivateDir {
 public:
  static Result<PrivateDir> create(const std::string& prefix);
  PrivateDir(PrivateDir&& other) noexcept : path_(std::move(other.path_)), keep_(other.keep_) { other.path_.clear(); }
  PrivateDir& operator=(PrivateDir&&) = delete;
  ~PrivateDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  void keep() { keep_ = true; }

 private:
  explicit PrivateDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
  bool keep_ = false;
};

}  // namespace ingero

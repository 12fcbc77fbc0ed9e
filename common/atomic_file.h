// SPDX-License-Identifier: Apache-2.0
// Whole-file writes that never leave a half-written file behind: write to a
// temporary file in the same directory, fsync, then rename over the target. Only a
// regular file (or a new path) is replaced that way; a FIFO or a character device
// (/dev/stdout, /dev/null, a named pipe) is opened and written in place, and any other
// kind of file is refused. A symlink is followed only when another user could not have
// planted it (see write_file_atomically).
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>

#include "common/result.h"
#include "common/unique_fd.h"

namespace ingero {

// Whether users other than this one (euid) could create or replace entries in a folder: it is
// writable by its group or by all, or owned by a user other than this one and root.
bool writable_by_others(const struct stat& dir);

// Creates missing parent directories. The temporary file is removed on failure. The file's mode
// is 0666 under the process's umask. The kind of path is bad input when it is a directory, a block
// device, a socket or a symlink to one, naming the path and what to pass instead. A symlink is
// followed only as the kernel's protected_symlinks rule would allow in a sticky folder, but in
// every folder: the link is this user's (euid's), or its folder is writable by no one else; any
// other link is bad input. A dangling link is replaced itself.
Status write_file_atomically(const std::string& path, std::string_view contents);

// "WHAT PATH: strerror(err)"; a full disk or quota (ENOSPC, EDQUOT) adds the hint to free
// space or choose another path.
Error file_write_error(const std::string& what, const std::string& path, int err);

// Removes the entries of dir whose name holds `marker` followed by a pid (the last such marker)
// when that process is gone: what a writer killed with SIGKILL left (DIR/OUT.partial-PID, a
// PrivateDir). Only this user's entries, never a PrivateDir that was kept.
void remove_stale_entries(const std::string& dir, const std::string& marker);

// Reads a whole file; a missing or unreadable file is bad input naming the path.
Result<std::string> read_file(const std::string& path);

// Opens an existing regular file for reading (with extra flags, e.g. O_DIRECT), never through a
// symlink at its last component, and never a FIFO or a device: a FIFO would block the open and
// /dev/zero a whole-file read forever. The error names the path.
Result<UniqueFd> open_regular_file(const std::string& path, int flags = 0);

// Checks, before any work, that a file can later be written at path: a FIFO or character
// device this user can write, or a new or regular file whose directory exists or can be
// created, and is writable. Bad input naming the flag otherwise.
Status check_writable_path(const std::string& flag, const std::string& path);
// The same for a SQLite file a writer opens: only a new path or a regular file, never a
// symlink (root must not create or overwrite the file a link points at), a device, a FIFO
// or a directory; SQLite would write its journal beside any of them.
Status check_writable_db(const std::string& flag, const std::string& path);
// The same for a folder that files will be written into.
Status check_writable_dir(const std::string& flag, const std::string& dir);

// Bad input when another user could steer what this process writes under dir: dir or a folder
// above it (as given, and as its links resolve) belongs to a user other than this one and root,
// is writable by others without the sticky bit, or is reached through another user's symlink.
// Parts not there yet are left out (this process creates them). The fix names the folder.
Status check_folder_not_shared(const std::string& flag, const std::string& dir);

// The folder for temporary files: TMPDIR when set and not empty, else /tmp. A TMPDIR that is
// missing or not a folder is bad input naming it and the fix.
Result<std::string> temp_folder();

// A fresh directory only this user can enter (mode 0700), TMPDIR/PREFIX-PID-XXXXXX, removed with
// everything in it when the owner goes, unless keep() was called; one whose owner died without
// removing it is removed by the next create() of the prefix.
class PrivateDir {
 public:
  static Result<PrivateDir> create(const std::string& prefix);
  PrivateDir(PrivateDir&& other) noexcept : path_(std::move(other.path_)), keep_(other.keep_) { other.path_.clear(); }
  PrivateDir& operator=(PrivateDir&&) = delete;
  ~PrivateDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  void keep();

 private:
  explicit PrivateDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
  bool keep_ = false;
};

}  // namespace ingero

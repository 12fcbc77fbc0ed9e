// SPDX-License-Identifier: Apache-2.0
// The user behind sudo. A root ingero-bench started with sudo (SUDO_UID, SUDO_GID) runs the
// user's own command as that user, with their groups, unless --as-root, and gives that user
// what it writes (the DB, the folders made for it): a root-owned results/ would make the
// user's next run fail.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "harness/child_process.h"

namespace ingero::harness {

// The user sudo was run by, when this process runs as root under sudo for another user;
// nullopt otherwise. Bad input when SUDO_UID or SUDO_GID is not a number.
Result<std::optional<Credentials>> sudo_user();

// HOME, USER and LOGNAME of that user (from the password database), for the job's environment.
std::vector<std::pair<std::string, std::string>> user_environment(const Credentials& user);

// The folders of path's parent that do not exist yet (the outermost last), to be given to the
// user once the run has made them.
std::vector<std::string> missing_parents(const std::string& path);

// Gives each path to the user; a symbolic link is not followed. A path that is gone is skipped.
void give_to_user(const Credentials& user, const std::vector<std::string>& paths);
// The same for a folder and everything in it.
void give_tree_to_user(const Credentials& user, const std::string& dir);

// What a root run under sudo writes where the user will look (the DB, --out and its records,
// --report) and the folders made for it: noted before it is made, given to the user once made.
// Without sudo (no user) it does nothing. A folder that existed already keeps its owner. What is
// noted is given again at the end, whichever way the command ends.
class UserOutputs {
 public:
  explicit UserOutputs(std::optional<Credentials> user = std::nullopt) : user_(std::move(user)) {}
  UserOutputs(const UserOutputs&) = delete;
  UserOutputs& operator=(const UserOutputs&) = delete;
  ~UserOutputs() { give(); }  // whichever way the command ends
  const std::optional<Credentials>& user() const { return user_; }
  // A file this run writes (or replaces), and the folders above it that do not exist yet.
  void add_file(const std::string& path);
  // A DB: the file with its -wal, -shm and -journal.
  void add_db(const std::string& path);
  // A folder this run writes into: the folder itself when it does not exist yet, and those above it.
  void add_folder(const std::string& dir);
  // Gives what is noted and made so far; called again as outputs appear (a path not made yet is skipped).
  void give() const;

 private:
  std::optional<Credentials> user_;
  std::vector<std::string> paths_;  // the outermost folders first
};

}  // namespace ingero::harness

// SPDX-License-Identifier: Apache-2.0
#include "harness/sudo_user.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "common/list_text.h"

namespace ingero::harness {

namespace {

namespace fs = std::filesystem;

std::optional<unsigned long> whole_number(const char* text) {
  if (text == nullptr) return std::nullopt;
  const auto value = parse_digits(text, 0xfffffffeUL);
  if (!value) return std::nullopt;
  return static_cast<unsigned long>(*value);
}

// Best effort: a file that stays root's is still there and readable; only the user's later rewrite of it fails.
void give(const Credentials& user, const std::string& path) {
  (void)fchownat(AT_FDCWD, path.c_str(), user.uid, user.gid, AT_SYMLINK_NOFOLLOW);
}

}  // namespace

Result<std::optional<Credentials>> sudo_user() {
  const char* uid_text = std::getenv("SUDO_UID");
  const char* gid_text = std::getenv("SUDO_GID");
  if (geteuid() != 0 || uid_text == nullptr || gid_text == nullptr) return std::optional<Credentials>();
  const auto uid = whole_number(uid_text), gid = whole_number(gid_text);
  if (!uid || !gid)
    return Error::bad_input(fmt::format("SUDO_UID={} SUDO_GID={} do not name a user", uid_text, gid_text),
                            "unset SUDO_UID and SUDO_GID, or pass --as-root to run the command as root");
  Credentials user{static_cast<uid_t>(*uid), static_cast<gid_t>(*gid), {}};
  if (user.uid == 0) return std::optional<Credentials>();  // sudo from root
  // The user's groups as a login gives them; without a password entry, the one group sudo named.
  if (const passwd* pw = getpwuid(user.uid)) {
    int count = 64;
    std::vector<gid_t> groups(static_cast<size_t>(count));
    if (getgrouplist(pw->pw_name, user.gid, groups.data(), &count) < 0) {
      groups.resize(static_cast<size_t>(count));
      // The first call sized the list to the user's groups: this one fits them (count says how many it wrote).
      (void)getgrouplist(pw->pw_name, user.gid, groups.data(), &count);
    }
    groups.resize(static_cast<size_t>(count > 0 ? count : 0));
    user.groups = std::move(groups);
  }
  if (user.groups.empty()) user.groups.push_back(user.gid);
  return std::optional<Credentials>(std::move(user));
}

std::vector<std::pair<std::string, std::string>> user_environment(const Credentials& user) {
  const passwd* pw = getpwuid(user.uid);
  if (pw == nullptr) return {};
  return {{"HOME", pw->pw_dir}, {"USER", pw->pw_name}, {"LOGNAME", pw->pw_name}};
}

std::vector<std::string> missing_parents(const std::string& path) {
  std::vector<std::string> missing;
  std::error_code ec;
  for (fs::path dir = fs::absolute(path, ec).parent_path(); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path()) {
    if (fs::symlink_status(dir, ec).type() != fs::file_type::not_found) break;
    missing.push_back(dir.string());
  }
  return missing;
}

void give_to_user(const Credentials& user, const std::vector<std::string>& paths) {
  for (const std::string& path : paths) give(user, path);
}

void give_tree_to_user(const Credentials& user, const std::string& dir) {
  give(user, dir);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    give(user, it->path().string());
}

void UserOutputs::add_file(const std::string& path) {
  if (!user_) return;
  std::vector<std::string> made = missing_parents(path);
  paths_.insert(paths_.end(), made.rbegin(), made.rend());
  paths_.push_back(path);
}

void UserOutputs::add_db(const std::string& path) {
  add_file(path);
  for (const char* suffix : {"-wal", "-shm", "-journal"}) add_file(path + suffix);
}

void UserOutputs::add_folder(const std::string& dir) {
  if (!user_) return;
  std::error_code ec;
  if (fs::symlink_status(dir, ec).type() == fs::file_type::not_found) add_file(dir);
}

void UserOutputs::give() const {
  if (user_) give_to_user(*user_, paths_);
}

}  // namespace ingero::harness

// SPDX-License-Identifier: Apache-2.0
#include "common/atomic_file.h"

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "common/unique_fd.h"

namespace ingero {

namespace fs = std::filesystem;

namespace {

// What an output path names.
enum class OutputTarget {
  replace,   // a new path, or a regular file (through a symlink: the file it names): temp file + rename
  in_place,  // a FIFO or a character device: opened and written as it is
};

// Where a write to path goes: the kind of file, the path written (for a replacement, the file a
// trusted symlink names, so that the link stays a link), and whether opening it must follow a
// link (a /proc magic link such as /dev/stdout's /proc/self/fd/1, which names no path).
struct Target {
  OutputTarget kind;
  std::string file;
  bool follow_last = false;
};

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string parent_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// Whether a link at `link` (opened O_PATH|O_NOFOLLOW as fd, stat st) may be followed by this
// process: the rule of the kernel's protected_symlinks, made to hold in every folder, not only in
// sticky world-writable ones. Otherwise anyone who can write the output's folder could plant a
// link there and make root replace the file it names.
Status check_link_trusted(const std::string& requested, const std::string& link, const struct stat& st) {
  if (st.st_uid == geteuid()) return {};
  struct stat dir {};
  const std::string folder = parent_of(link);
  if (stat(folder.c_str(), &dir) == 0 && !writable_by_others(dir)) return {};
  return Error::bad_input(
      fmt::format("{} is a symbolic link{} owned by uid {} in {}, a folder other users can write; an output does not "
                  "follow a link another user could have planted",
                  requested, link == requested ? "" : fmt::format(" (through {})", link), st.st_uid, folder),
      "remove the link, or name a path in a folder only you can write");
}

// Follows path's links hop by hop, each one trusted (above) and read through the descriptor that
// was checked, so that it cannot be swapped in between. nullopt: no file there (a new path, or a
// dangling link, which is replaced itself: nothing is created where it points).
Result<std::optional<Target>> resolve_links(const std::string& path) {
  std::string cur = path;
  for (int hops = 0; hops <= 40; ++hops) {
    UniqueFd fd(::open(cur.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || fstat(fd.get(), &st) != 0) return std::optional<Target>{};  // new (or unreachable: said later)
    if (!S_ISLNK(st.st_mode)) return std::optional<Target>{Target{OutputTarget::replace, cur}};
    if (Status trusted = check_link_trusted(path, cur, st); !trusted) return trusted.error();
    struct statfs where {};
    if (fstatfs(fd.get(), &where) == 0 && where.f_type == PROC_SUPER_MAGIC)
      return std::optional<Target>{Target{OutputTarget::in_place, cur, true}};  // its kind is read below
    char buf[PATH_MAX];
    const ssize_t n = readlinkat(fd.get(), "", buf, sizeof buf - 1);
    if (n <= 0) return std::optional<Target>{};
    const std::string next(buf, static_cast<size_t>(n));
    cur = next[0] == '/' ? next : (fs::path(parent_of(cur)) / next).string();
  }
  return Error::bad_input(fmt::format("{}: too many levels of symbolic links", path), "name the file itself");
}

// The message names the path only; callers that know the flag put it in front.
Result<Target> classify(const std::string& path) {
  auto resolved = resolve_links(path);
  if (!resolved) return resolved.error();
  if (!*resolved) return Target{OutputTarget::replace, path};
  const Target& target = **resolved;
  struct stat st {};
  const int got = target.follow_last ? stat(target.file.c_str(), &st) : lstat(target.file.c_str(), &st);
  if (got != 0) return Target{OutputTarget::replace, path};
  // A regular file behind /dev/stdout (`> out.md`) is the shell's: appended to, as its descriptor would be.
  if (S_ISREG(st.st_mode) && target.follow_last) return target;
  if (S_ISREG(st.st_mode)) return Target{OutputTarget::replace, target.file};
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return Target{OutputTarget::in_place, target.file, target.follow_last};
  return Error::bad_input(fmt::format("{} is {}; output goes to a regular file, a FIFO or a character device", path,
                                      file_kind(st.st_mode)),
                          "name a new or regular file (or /dev/stdout)");
}

// 0 when all was written, else the errno.
int write_all(int fd, std::string_view contents) {
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return 0;
}

// What to do about an errno that says the disk is full (or the quota spent); empty for others.
std::string full_disk_hint(int err, const std::string& path) {
  if (err != ENOSPC && err != EDQUOT) return {};
  return fmt::format("the disk (or quota) holding {} is full: free space there, or choose another path", path);
}

// The process's umask, read without changing it (umask(2) sets it too, racing other threads'
// file creation); 022 where /proc does not say.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  return 022;
}

// A FIFO or a character device (or the file behind a /proc magic link, appended to): opened
// without creating or truncating anything, and without following a link other than that one.
Status write_in_place(const Target& target, std::string_view contents) {
  const std::string& path = target.file;
  const int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | (target.follow_last ? O_APPEND : O_NOFOLLOW);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return file_write_error("cannot open for writing", path, errno);
  struct stat st {};
  const bool stated = fstat(fd, &st) == 0;
  const bool kind_kept = S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || (target.follow_last && S_ISREG(st.st_mode));
  Status written;
  if (!stated || !kind_kept)
    written = Error::failure(fmt::format("{} changed while it was opened; nothing was written", path));
  else if (int err = write_all(fd, contents); err != 0)
    written = file_write_error("cannot write", path, err);
  if (close(fd) != 0 && written) written = file_write_error("cannot write", path, errno);
  return written;
}

}  // namespace

bool writable_by_others(const struct stat& dir) {
  return (dir.st_mode & (S_IWGRP | S_IWOTH)) != 0 || (dir.st_uid != geteuid() && dir.st_uid != 0);
}

Error file_write_error(const std::string& what, const std::string& path, int err) {
  return Error::failure(fmt::format("{} {}: {}", what, path, std::strerror(err)), full_disk_hint(err, path));
}

Status write_file_atomically(const std::string& requested, std::string_view contents) {
  auto classified = classify(requested);
  if (!classified) return classified.error();
  if (classified->kind == OutputTarget::in_place) return write_in_place(*classified, contents);
  const std::string& path = classified->file;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) return file_write_error("cannot create directory", target.parent_path().string(), ec.value());
  }
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return file_write_error("cannot create a temporary file next to", path, errno);
  auto fail = [&](const char* what, int err) {
    close(fd);
    unlink(tmp.c_str());
    return file_write_error(what, path, err);
  };
  if (int err = write_all(fd, contents); err != 0) return fail("cannot write", err);
  // mkstemp made it 0600; it gets the mode open(O_CREAT, 0666) would give it under the umask.
  if (fchmod(fd, 0666 & ~current_umask()) != 0) return fail("cannot set the mode of", errno);
  if (fsync(fd) != 0) return fail("cannot sync", errno);
  if (close(fd) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return file_write_error("cannot close the temporary file of", path, err);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return file_write_error("cannot rename into", path, err);
  }
  return {};
}

namespace {

// The nearest existing ancestor of path (path itself when it exists).
fs::path existing_ancestor(fs::path path) {
  std::error_code ec;
  if (path.empty()) path = ".";
  path = fs::absolute(path, ec);
  while (!fs::exists(path, ec) && path.has_parent_path() && path != path.parent_path()) path = path.parent_path();
  return path;
}

Status check_dir_writable(const std::string& flag, const fs::path& dir, const std::string& what) {
  std::error_code ec;
  const fs::path base = existing_ancestor(dir);
  if (!fs::is_directory(base, ec))
    return Error::bad_input(fmt::format("{} {}: {} is not a directory", flag, what, base.string()),
                            "choose a path in a writable directory");
  if (access(base.c_str(), W_OK | X_OK) != 0)
    return Error::bad_input(fmt::format("{} {}: {} cannot be written by this user", flag, what, base.string()),
                            "choose a path in a writable directory");
  // access() says yes to root everywhere, and /proc, sysfs or a read-only mount refuse only the
  // write itself: what the output needs (a folder, then files in it) is created once and removed.
  std::string probe = (base / ".ingero-bench-probe-XXXXXX").string();
  if (mkdtemp(probe.data()) == nullptr) {
    const int err = errno;
    const std::string full = full_disk_hint(err, base.string());
    return Error::bad_input(
        fmt::format("{} {}: nothing can be created in {} ({})", flag, what, base.string(), std::strerror(err)),
        full.empty() ? "choose a path in a writable directory" : full);
  }
  rmdir(probe.c_str());
  return {};
}

}  // namespace

Status check_writable_path(const std::string& flag, const std::string& path) {
  if (path.empty()) return Error::bad_input(fmt::format("{} is empty", flag), fmt::format("pass {} FILE", flag));
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return Error::bad_input(fmt::format("{} {} is a directory, not a file", flag, path), "name a file");
  auto target = classify(path);
  if (!target) return Error::bad_input(fmt::format("{} {}", flag, target.error().message), target.error().hint);
  if (target->kind == OutputTarget::in_place) {
    if (access(path.c_str(), W_OK) != 0)
      return Error::bad_input(fmt::format("{} {} cannot be written by this user", flag, path), "choose another file");
    return {};
  }
  if (fs::exists(path, ec) && access(path.c_str(), W_OK) != 0)
    return Error::bad_input(fmt::format("{} {} cannot be written by this user", flag, path), "choose another file");
  return check_dir_writable(flag, fs::path(target->file).parent_path(), path);
}

Status check_writable_db(const std::string& flag, const std::string& path) {
  if (path.empty()) return Error::bad_input(fmt::format("{} is empty", flag), fmt::format("pass {} FILE", flag));
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      char real[PATH_MAX];
      const bool resolved = realpath(path.c_str(), real) != nullptr;
      return Error::bad_input(
          fmt::format("{} {} is a symbolic link; a trace DB is written only to a regular file or a new path", flag,
                      path),
          resolved ? fmt::format("pass the file it points to: {} {}", flag, real)
                   : std::string("it points to a missing file: pass a new path instead"));
    }
    if (!S_ISREG(st.st_mode))
      return Error::bad_input(fmt::format("{} {} is {}; a trace DB is written only to a regular file or a new path",
                                          flag, path, S_ISCHR(st.st_mode)    ? "a character device"
                                                      : S_ISFIFO(st.st_mode) ? "a FIFO"
                                                                             : file_kind(st.st_mode)),
                              fmt::format("pass a file name, e.g. {} results/trace.db", flag));
  }
  return check_writable_path(flag, path);
}

Status check_writable_dir(const std::string& flag, const std::string& dir) {
  if (dir.empty()) return Error::bad_input(fmt::format("{} is empty", flag), fmt::format("pass {} DIR", flag));
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    return Error::bad_input(fmt::format("{} {} exists and is not a directory", flag, dir), "name a directory");
  return check_dir_writable(flag, dir, dir);
}

namespace {

// Why another user could add, remove or swap entries of the folder st (empty when no one could).
std::string shared_because(const struct stat& st) {
  if (st.st_uid != geteuid() && st.st_uid != 0) return fmt::format("it belongs to uid {}", st.st_uid);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)
    return fmt::format("others can write it (mode {:04o}) and it has no sticky bit", st.st_mode & 07777);
  return {};
}

// path and each folder above it.
void add_with_parents(fs::path path, std::vector<fs::path>* chain) {
  for (;; path = path.parent_path()) {
    chain->push_back(path);
    if (path == path.parent_path() || path.empty()) break;
  }
}

}  // namespace

Status check_folder_not_shared(const std::string& flag, const std::string& dir) {
  std::error_code ec;
  const fs::path given = fs::absolute(dir, ec).lexically_normal();
  std::vector<fs::path> chain;
  add_with_parents(given, &chain);
  if (const fs::path real = fs::weakly_canonical(given, ec); !ec && real != given) add_with_parents(real, &chain);
  for (const fs::path& folder : chain) {
    struct stat st {};
    if (lstat(folder.c_str(), &st) != 0) continue;  // not there yet: this process creates it
    std::string why;
    if (S_ISLNK(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0)
      why = fmt::format("it is a symbolic link of uid {}", st.st_uid);
    else if (S_ISLNK(st.st_mode) && stat(folder.c_str(), &st) != 0)
      continue;
    if (why.empty() && S_ISDIR(st.st_mode)) why = shared_because(st);
    if (why.empty()) continue;
    const bool others_own = st.st_uid != geteuid() && st.st_uid != 0;
    return Error::bad_input(
        fmt::format("{} {}: another user could steer what is written there: {} is not yours alone ({})", flag, dir,
                    folder.string(), why),
        others_own ? fmt::format("pass {} DIR, a folder of your own", flag)
                   : fmt::format("chmod go-w {} (or chmod +t {} for a shared folder), or pass {} DIR, a folder only "
                                 "you can write",
                                 folder.string(), folder.string(), flag));
  }
  return {};
}

namespace {

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  (void)::remove(path);  // an entry left keeps its folder, which the next create() of the prefix removes
  return 0;  // go on with the rest
}

// Removed with nftw, not std::filesystem::remove_all: LibTorch 2.x exports its own copy of
// that function (seen calling through a null pointer), and the dynamic linker binds ours to it.
void remove_tree(const std::string& path) { nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

constexpr const char* kKeptMarker = ".kept";

}  // namespace

void remove_stale_entries(const std::string& dir, const std::string& marker) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t at = name.rfind(marker);
    if (at == std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::atoll(name.c_str() + at + marker.size()));
    if (pid <= 0 || ::kill(pid, 0) == 0 || errno == EPERM) continue;  // not a pid, or its owner still runs
    struct stat st {};
    // Another user's, or one kept on purpose (it holds a record the user was told about).
    if (lstat(entry.path().c_str(), &st) != 0 || st.st_uid != geteuid()) continue;
    if (S_ISDIR(st.st_mode) && access((entry.path() / kKeptMarker).c_str(), F_OK) == 0) continue;
    remove_tree(entry.path().string());
  }
}

Result<std::string> temp_folder() {
  // Read here, not through std::filesystem::temp_directory_path, which throws (an abort, exit 134)
  // for a TMPDIR that is not a folder.
  const char* tmpdir = std::getenv("TMPDIR");
  if (tmpdir == nullptr || *tmpdir == '\0') return std::string("/tmp");
  struct stat st {};
  if (stat(tmpdir, &st) != 0)
    return Error::bad_input(fmt::format("TMPDIR={} cannot be used: {}", tmpdir, std::strerror(errno)),
                            fmt::format("create it (mkdir -p {}), or unset TMPDIR to use /tmp", tmpdir));
  if (!S_ISDIR(st.st_mode))
    return Error::bad_input(fmt::format("TMPDIR={} is not a folder", tmpdir),
                            "set TMPDIR to a writable folder, or unset it to use /tmp");
  return std::string(tmpdir);
}

Result<PrivateDir> PrivateDir::create(const std::string& prefix) {
  auto tmp = temp_folder();
  if (!tmp) return tmp.error();
  // The owner's pid in the name: what a SIGKILL (or a crash) left is removed by the next owner.
  const std::string marker = prefix + "-";
  remove_stale_entries(*tmp, marker);
  std::string pattern = (fs::path(*tmp) / fmt::format("{}{}-XXXXXX", marker, getpid())).string();
  if (mkdtemp(pattern.data()) == nullptr)
    return Error::failure(fmt::format("cannot create a temporary directory in {}: {}", *tmp, std::strerror(errno)),
                          "set TMPDIR to a writable directory with free space");
  return PrivateDir(pattern);
}

void PrivateDir::keep() {
  if (keep_ || path_.empty()) return;
  keep_ = true;
  // Marked, so that the next owner's clean-up leaves it.
  const int fd = ::open(file(kKeptMarker).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
}

PrivateDir::~PrivateDir() {
  if (path_.empty() || keep_) return;
  remove_tree(path_);
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error::bad_input("cannot read " + path + ": " + std::strerror(errno),
                            "check that the path exists and is readable");
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<UniqueFd> open_regular_file(const std::string& path, int flags) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | flags));
  if (!fd) {
    if (errno == ELOOP) return Error::failure(fmt::format("{} is a symbolic link, not a regular file", path));
    return Error::failure(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return Error::failure(fmt::format("cannot stat {}: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return Error::failure(fmt::format("{} is not a regular file", path));
  return fd;
}

}  // namespace ingero

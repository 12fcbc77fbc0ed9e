#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ingero {

namespace fs = std::filesystem;

Status write_file_atomically(const std::string& path, std::string_view contents) {
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) {
      return Error::failure("cannot create directory " + target.parent_path().string() + ": " +
                            ec.message());
    }
  }
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) {
    return Error::failure("cannot create temporary file next to " + path + ": " +
                          std::strerror(errno));
  }
  auto fail = [&](const char* what) {
    int err = errno;
    close(fd);
    unlink(tmp.c_str());
    return Error::failure(std::string(what) + " " + path + ": " + std::strerror(err));
  };
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (fchmod(fd, 0644) != 0 || fsync(fd) != 0) return fail("cannot sync");
  if (close(fd) != 0) {
    unlink(tmp.c_str());
    return Error::failure("cannot close temporary file for " + path);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return Error::failure("cannot rename into " + path + ": " + std::strerror(err));
  }
  return {};
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

}  // namespace ingero

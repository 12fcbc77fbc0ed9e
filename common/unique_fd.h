// SPDX-License-Identifier: Apache-2.0
// A file descriptor with one owner: closed when its owner goes, moved, never copied.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <optional>
#include <utility>

namespace ingero {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }  // the caller owns it now
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Both ends of a pipe2(flags); nullopt with errno set when it failed.
struct Pipe {
  UniqueFd read;
  UniqueFd write;
};
inline std::optional<Pipe> make_pipe(int flags) {
  int fds[2];
  if (pipe2(fds, flags) != 0) return std::nullopt;
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

}  // namespace ingero

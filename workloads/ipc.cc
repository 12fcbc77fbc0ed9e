// SPDX-License-Identifier: Apache-2.0
#include "workloads/ipc.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <stdexcept>

namespace ingero::workloads::ipc {

namespace {

IoStatus write_all(int sock, const void* buf, size_t len) {
  const char* p = static_cast<const char*>(buf);
  while (len > 0) {
    ssize_t n = ::send(sock, p, len, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return (errno == EPIPE || errno == ECONNRESET) ? IoStatus::closed : IoStatus::error;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return IoStatus::ok;
}

IoStatus read_all(int sock, void* buf, size_t len) {
  char* p = static_cast<char*>(buf);
  while (len > 0) {
    ssize_t n = ::recv(sock, p, len, 0);
    if (n == 0) return IoStatus::closed;
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == ECONNRESET ? IoStatus::closed : IoStatus::error;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return IoStatus::ok;
}

}  // namespace

IoStatus send_task(int sock, const TaskHeader& header, const int64_t* indices) {
  IoStatus s = write_all(sock, &header, sizeof(header));
  if (s != IoStatus::ok || header.count <= 0) return s;
  return write_all(sock, indices, static_cast<size_t>(header.count) * sizeof(int64_t));
}

IoStatus recv_task(int sock, TaskHeader* header, std::vector<int64_t>* indices) {
  IoStatus s = read_all(sock, header, sizeof(*header));
  if (s != IoStatus::ok) return s;
  indices->resize(header->count > 0 ? static_cast<size_t>(header->count) : 0);
  if (indices->empty()) return IoStatus::ok;
  return read_all(sock, indices->data(), indices->size() * sizeof(int64_t));
}

IoStatus send_reply(int sock, const ReplyHeader& header, int fd) {
  iovec iov{const_cast<ReplyHeader*>(&header), sizeof(header)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cm), &fd, sizeof(int));
  }
  for (;;) {
    ssize_t n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(sizeof(header))) return IoStatus::ok;
    if (n < 0 && errno == EINTR) continue;
    // The header is far below the socket buffer size: a short write means the peer is gone.
    return (n < 0 && errno != EPIPE && errno != ECONNRESET) ? IoStatus::error : IoStatus::closed;
  }
}

IoStatus recv_reply(int sock, ReplyHeader* header, UniqueFd* fd) {
  fd->reset();
  iovec iov{header, sizeof(*header)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (n < 0 && errno == EINTR);
  for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
    int received = -1;
    std::memcpy(&received, CMSG_DATA(cm), sizeof(int));
    fd->reset(received);
  }
  if (n == static_cast<ssize_t>(sizeof(*header))) return IoStatus::ok;
  fd->reset();
  return n <= 0 && (n == 0 || errno == ECONNRESET) ? IoStatus::closed : IoStatus::error;
}

std::optional<SharedBuffer> SharedBuffer::create(int64_t count, int64_t features, std::string* error) {
  const size_t bytes = static_cast<size_t>(count * features) * sizeof(float);
  UniqueFd fd(memfd_create("ib-batch", MFD_CLOEXEC));
  if (!fd) {
    *error = std::string("memfd_create: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
    *error = std::string("ftruncate of batch buffer: ") + std::strerror(errno);
    return std::nullopt;
  }
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (data == MAP_FAILED) {
    *error = std::string("mmap of batch buffer: ") + std::strerror(errno);
    return std::nullopt;
  }
  return SharedBuffer(std::move(fd), data, bytes);
}

SharedBuffer::SharedBuffer(SharedBuffer&& other) noexcept
    : fd_(std::move(other.fd_)), data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

SharedBuffer::~SharedBuffer() {
  if (data_ != nullptr) munmap(data_, bytes_);
}

torch::Tensor map_shared_tensor(UniqueFd fd, int64_t count, int64_t features) {
  const size_t bytes = static_cast<size_t>(count * features) * sizeof(float);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  fd.reset();  // the mapping keeps the memory
  if (p == MAP_FAILED) throw std::runtime_error(std::string("mmap of received batch: ") + std::strerror(errno));
  return torch::from_blob(
      p, {count, features}, [bytes](void* ptr) { munmap(ptr, bytes); }, torch::kFloat32);
}

}  // namespace ingero::workloads::ipc

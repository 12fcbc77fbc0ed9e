// SPDX-License-Identifier: Apache-2.0
// Worker <-> main process messages over a SOCK_STREAM socketpair, and batch
// buffers in anonymous shared memory (memfd) whose descriptor travels with the
// reply (SCM_RIGHTS). A memfd vanishes with its last descriptor and mapping, so
// no run, crash or Ctrl-C can leave a shared-memory segment behind.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace ingero::workloads::ipc {

inline constexpr int64_t kShutdownBatch = -1;

// main -> worker: header followed by `count` int64 sample indices.
struct TaskHeader {
  int64_t batch = 0;  // kShutdownBatch asks the worker to exit
  int64_t count = 0;
  int64_t epoch = 0;  // the run's epoch: a sample's random flip depends on it (jpeg)
};

// worker -> main: header, with the batch's memfd attached when ok.
struct ReplyHeader {
  int64_t batch = 0;
  int64_t count = 0;
  uint64_t ready_ns = 0;  // when the worker became ready for its first task (CLOCK_MONOTONIC)
  int32_t ok = 0;
  char error[492] = {};  // room for a file path and a sample in the message
};

enum class IoStatus { ok, closed, error };

// Blocking, EINTR-safe, no SIGPIPE. IoStatus::closed means the peer is gone.
IoStatus send_task(int sock, const TaskHeader& header, const int64_t* indices);
IoStatus recv_task(int sock, TaskHeader* header, std::vector<int64_t>* indices);
IoStatus send_reply(int sock, const ReplyHeader& header, int fd);
// The memfd a reply carried, if any, is handed to *fd (owned: closed unless kept).
IoStatus recv_reply(int sock, ReplyHeader* header, UniqueFd* fd);

// A count x features float32 buffer in a fresh memfd, mapped read-write; unmapped and closed
// with its owner.
class SharedBuffer {
 public:
  static std::optional<SharedBuffer> create(int64_t count, int64_t features, std::string* error);
  SharedBuffer(SharedBuffer&& other) noexcept;
  SharedBuffer& operator=(SharedBuffer&&) = delete;
  ~SharedBuffer();
  int fd() const { return fd_.get(); }
  void* data() const { return data_; }

 private:
  SharedBuffer(UniqueFd fd, void* data, size_t bytes) : fd_(std::move(fd)), data_(data), bytes_(bytes) {}
  UniqueFd fd_;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Maps a received memfd as a tensor that unmaps itself when freed; the fd is closed.
torch::Tensor map_shared_tensor(UniqueFd fd, int64_t count, int64_t features);

}  // namespace ingero::workloads::ipc

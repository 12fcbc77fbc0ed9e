// SPDX-License-Identifier: Apache-2.0
// A C++ reproduction of PyTorch's multi-process DataLoader (torch/utils/data/dataloader.py):
// forked worker processes fetch samples one by one and collate them (or gather the whole
// batch at once for `loader-batched`) into shared memory; the main process hands out index
// lists round-robin with at most prefetch_factor x num_workers batches outstanding, an
// optional pin-memory thread copies arrivals into page-locked memory, and batches are
// yielded in order. num_workers = 0 fetches and collates in the main process.
#include "workloads/process_loader.h"

#include <torch/torch.h>

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/unique_fd.h"
#include "common/wait_status.h"
#include "workloads/ipc.h"
#include "workloads/model.h"

namespace ingero::workloads {

namespace {

using Clock = std::chrono::steady_clock;

// Waits up to `timeout` for pid; SIGKILLs it after that. Returns the wait status.
int reap(pid_t pid, std::chrono::milliseconds timeout) {
  int status = 0;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return status;
    if (Clock::now() >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// --- worker process -------------------------------------------------------------------

[[noreturn]] void worker_main(int id, int sock, pid_t parent, const SampleStore& store, bool per_sample) {
  // Die with the main process, whatever kills it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  prctl(PR_SET_NAME, fmt::format("ib-worker-{}", id).c_str());
  // The main process owns Ctrl-C handling (and the terminal's SIGQUIT and SIGHUP, which reach
  // the whole process group) and shuts workers down itself.
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGTERM, SIG_DFL);
  // As PyTorch does in every worker: one intra-op thread. The parent's OpenMP pool does
  // not exist in a forked child; a single-threaded region never touches it.
  at::set_num_threads(1);
  const uint64_t ready_ns = static_cast<uint64_t>(monotonic_ns());

  ipc::TaskHeader task;
  std::vector<int64_t> indices;
  for (;;) {
    if (ipc::recv_task(sock, &task, &indices) != ipc::IoStatus::ok) _exit(0);
    if (task.batch == ipc::kShutdownBatch) _exit(0);
    ipc::ReplyHeader reply;
    reply.batch = task.batch;
    reply.count = task.count;
    reply.ready_ns = ready_ns;
    std::string error;
    auto buffer = ipc::SharedBuffer::create(task.count, store.features(), &error);
    if (buffer) {
      try {
        auto out = torch::from_blob(buffer->data(), {task.count, store.features()}, torch::kFloat32);
        auto idx = torch::from_blob(indices.data(), {task.count}, torch::kInt64);
        collate_into(out, store, idx, per_sample, static_cast<int>(task.epoch));
        reply.ok = 1;
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    if (!reply.ok) std::snprintf(reply.error, sizeof(reply.error), "%s", error.c_str());
    const auto sent = ipc::send_reply(sock, reply, reply.ok ? buffer->fd() : -1);
    buffer.reset();  // the main process holds the memfd now
    if (sent != ipc::IoStatus::ok || !reply.ok) _exit(reply.ok ? 0 : 1);
  }
}

// --- main-process side ------------------------------------------------------------------

struct Worker {
  int id = 0;
  pid_t pid = -1;
  UniqueFd sock;  // the socket to its worker process
  uint64_t fork_ns = 0;
  bool reported_ready = false;
};

struct Arrival {
  int64_t batch = 0;
  torch::Tensor data;
  std::exception_ptr failure;
};

// Arrivals handed from the pin thread to the main loop.
class ArrivalQueue {
 public:
  void push(Arrival a) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      items_.push_back(std::move(a));
    }
    cv_.notify_one();
  }
  // Waits in slices so a stop request is seen.
  Arrival pop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (items_.empty()) {
      if (stop_requested()) throw Interrupted();
      cv_.wait_for(lock, std::chrono::milliseconds(50));
    }
    Arrival a = std::move(items_.front());
    items_.pop_front();
    return a;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    items_.clear();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Arrival> items_;
};

class ProcessLoader final : public BatchSource {
 public:
  ProcessLoader(const WorkloadConfig& config, std::shared_ptr<const SampleStore> store, bool per_sample, bool pin)
      : config_(config), store_(std::move(store)), per_sample_(per_sample), pin_(pin) {}

  ~ProcessLoader() override {
    stop_pin_thread();
    shutdown_workers();
  }

  void begin_epoch(int epoch) override {
    order_ = epoch_order(config_, epoch);
    epoch_ = epoch;
    total_ = config_.batches_in_epoch(epoch);
    dispatched_ = yielded_ = 0;
    ready_.clear();
    arrivals_.clear();
    if (config_.num_workers == 0) return;
    if (workers_.empty()) fork_workers();
    dispatch_more();
    if (pin_) start_pin_thread();
  }

  std::optional<Batch> next() override {
    if (stop_requested()) throw Interrupted();
    if (yielded_ >= total_) return std::nullopt;
    const BatchRange range = batch_range(config_, yielded_);
    auto indices = order_.narrow(0, range.start, range.count);
    torch::Tensor data = config_.num_workers == 0 ? load_in_main(indices) : wait_for(yielded_);
    ++yielded_;
    dispatch_more();
    return Batch{std::move(data), indices};
  }

  void end_epoch() override {
    stop_pin_thread();
    if (!config_.persistent_workers) shutdown_workers();
  }

  LoaderStats stats() const override {
    std::lock_guard<std::mutex> lock(starts_mutex_);
    return stats_;
  }

 private:
  torch::Tensor load_in_main(const torch::Tensor& indices) {
    auto out = torch::empty({indices.size(0), store_->features()}, torch::kFloat32);
    collate_into(out, *store_, indices, per_sample_, epoch_);
    return pin_ ? out.pin_memory() : out;
  }

  void fork_workers() {
    const pid_t parent = getpid();
    for (int i = 0; i < config_.num_workers; ++i) {
      int sv[2];
      if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        throw WorkerFailure(fmt::format("socketpair for worker {}: {}", i, std::strerror(errno)));
      }
      UniqueFd mine(sv[0]), theirs(sv[1]);
      const auto fork_ns = static_cast<uint64_t>(monotonic_ns());
      pid_t pid = fork();
      if (pid < 0) throw WorkerFailure(fmt::format("fork of worker {}: {}", i, std::strerror(errno)));
      if (pid == 0) {
        // worker_main never returns: the owners here are never destroyed in the child.
        for (const auto& w : workers_) close(w.sock.get());
        close(mine.get());
        worker_main(i, theirs.get(), parent, *store_, per_sample_);
      }
      theirs.reset();
      workers_.push_back(Worker{i, pid, std::move(mine), fork_ns, false});
      ++stats_.worker_forks;
    }
  }

  void shutdown_workers() {
    for (auto& w : workers_) {
      ipc::TaskHeader bye{ipc::kShutdownBatch, 0};
      ipc::send_task(w.sock.get(), bye, nullptr);
    }
    for (auto& w : workers_) {
      w.sock.reset();
      reap(w.pid, std::chrono::milliseconds(2000));
    }
    workers_.clear();
  }

  // Round-robin, as PyTorch's _try_put_index: outstanding <= prefetch_factor x workers.
  void dispatch_more() {
    const int64_t limit = static_cast<int64_t>(config_.effective_prefetch_factor()) * config_.num_workers;
    while (!workers_.empty() && dispatched_ < total_ && dispatched_ - yielded_ < limit) {
      const Worker& w = workers_[static_cast<size_t>(dispatched_ % static_cast<int64_t>(workers_.size()))];
      const BatchRange range = batch_range(config_, dispatched_);
      auto idx = order_.narrow(0, range.start, range.count).contiguous();
      ipc::TaskHeader task{dispatched_, range.count, epoch_};
      if (ipc::send_task(w.sock.get(), task, idx.data_ptr<int64_t>()) != ipc::IoStatus::ok) throw_worker_gone(w);
      ++dispatched_;
      stats_.max_in_flight = std::max(stats_.max_in_flight, dispatched_ - yielded_);
    }
  }

  torch::Tensor wait_for(int64_t batch) {
    for (;;) {
      auto it = ready_.find(batch);
      if (it != ready_.end()) {
        torch::Tensor t = std::move(it->second);
        ready_.erase(it);
        return t;
      }
      Arrival a = pin_ ? arrivals_.pop() : receive_one();
      if (a.failure) std::rethrow_exception(a.failure);
      ready_.emplace(a.batch, std::move(a.data));
    }
  }

  // One reply from whichever worker is ready; a dead worker is reported by id and signal.
  Arrival receive_one() {
    std::vector<pollfd> fds;
    for (const auto& w : workers_) fds.push_back(pollfd{w.sock.get(), POLLIN, 0});
    for (;;) {
      if (stop_requested() || pin_stop_) throw Interrupted();
      int n = poll(fds.data(), fds.size(), 100);
      if (n < 0 && errno != EINTR) throw WorkerFailure(std::string("poll: ") + std::strerror(errno));
      for (size_t i = 0; n > 0 && i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        ipc::ReplyHeader reply;
        UniqueFd fd;
        if (ipc::recv_reply(workers_[i].sock.get(), &reply, &fd) != ipc::IoStatus::ok) throw_worker_gone(workers_[i]);
        note_ready(workers_[i], reply.ready_ns);
        if (!reply.ok) {
          throw WorkerFailure(fmt::format("loader worker {} (pid {}) failed on batch {}: {}", workers_[i].id,
                                          workers_[i].pid, reply.batch, reply.error));
        }
        return Arrival{reply.batch, ipc::map_shared_tensor(std::move(fd), reply.count, store_->features()), nullptr};
      }
    }
  }

  // A worker that fails a batch replies with why and exits. Found gone while the main process sends
  // it a task, its replies are still in the socket, unread: the failure among them says why.
  std::optional<std::string> unread_failure(const Worker& w) {
    pollfd readable{w.sock.get(), POLLIN, 0};
    while (poll(&readable, 1, 0) == 1 && (readable.revents & POLLIN)) {
      ipc::ReplyHeader reply;
      UniqueFd fd;
      if (ipc::recv_reply(w.sock.get(), &reply, &fd) != ipc::IoStatus::ok) break;
      if (!reply.ok)
        return fmt::format("loader worker {} (pid {}) failed on batch {}: {}", w.id, w.pid, reply.batch, reply.error);
    }
    return std::nullopt;
  }

  // The first reply of a worker says when it became ready: its start-up, fork to ready.
  void note_ready(Worker& w, uint64_t ready_ns) {
    if (w.reported_ready || ready_ns == 0) return;
    w.reported_ready = true;
    std::lock_guard<std::mutex> lock(starts_mutex_);
    stats_.starts.push_back(WorkerStart{w.id, w.pid, w.fork_ns, ready_ns});
  }

  [[noreturn]] void throw_worker_gone(const Worker& w) {
    if (auto why = unread_failure(w)) throw WorkerFailure(*why);
    int status = reap(w.pid, std::chrono::milliseconds(500));
    throw WorkerFailure(fmt::format("loader worker {} (pid {}) {}", w.id, w.pid, describe_wait_status(status)));
  }

  void start_pin_thread() {
    pin_stop_ = false;
    pin_thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "ib-pin");
      const int64_t expected = total_;
      for (int64_t got = 0; got < expected && !pin_stop_; ++got) {
        try {
          Arrival a = receive_one();
          a.data = a.data.pin_memory();
          arrivals_.push(std::move(a));
        } catch (const Interrupted&) {
          return;
        } catch (...) {
          arrivals_.push(Arrival{-1, {}, std::current_exception()});
          return;
        }
      }
    });
  }

  void stop_pin_thread() {
    if (!pin_thread_.joinable()) return;
    pin_stop_ = true;
    pin_thread_.join();
  }

  WorkloadConfig config_;
  std::shared_ptr<const SampleStore> store_;
  int epoch_ = 0;
  bool per_sample_;
  bool pin_;
  std::vector<Worker> workers_;
  torch::Tensor order_;
  int64_t total_ = 0;
  int64_t dispatched_ = 0;
  int64_t yielded_ = 0;
  std::map<int64_t, torch::Tensor> ready_;
  ArrivalQueue arrivals_;
  std::thread pin_thread_;
  std::atomic<bool> pin_stop_{false};
  mutable std::mutex starts_mutex_;  // the pin thread receives replies too
  LoaderStats stats_;
};

}  // namespace

std::unique_ptr<BatchSource> make_process_loader(const WorkloadConfig& config, std::shared_ptr<const SampleStore> store,
                                                 bool per_sample, bool pin) {
  return std::make_unique<ProcessLoader>(config, std::move(store), per_sample, pin);
}

}  // namespace ingero::workloads

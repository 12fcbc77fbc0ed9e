// SPDX-License-Identifier: Apache-2.0
#include "tracer/process_sampler.h"

#include <dirent.h>
#include <unistd.h>
#include <sys/statvfs.h>
#include <time.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "common/clock.h"

namespace ingero::tracer {
namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Entries of /proc/PID/fd, without opening any of them.
std::optional<uint64_t> count_fds(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) return std::nullopt;
  uint64_t n = 0;
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

void parse_smaps_rollup(const std::string& text, ProcessSample& sample) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string_view key(line.data(), colon);
    std::optional<uint64_t>* field = key == "Rss"             ? &sample.rss_bytes
                                     : key == "Pss"           ? &sample.pss_bytes
                                     : key == "Private_Dirty" ? &sample.private_dirty_bytes
                                     : key == "Swap"          ? &sample.swap_bytes
                                                              : nullptr;
    if (!field) continue;
    unsigned long long kb = 0;
    if (sscanf(line.c_str() + colon + 1, "%llu", &kb) == 1) *field = static_cast<uint64_t>(kb) * 1024;
  }
}

void parse_status(const std::string& text, ProcessSample& sample) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::optional<uint64_t>* field = line.rfind("VmRSS:", 0) == 0    ? &sample.rss_bytes
                                     : line.rfind("VmSwap:", 0) == 0 ? &sample.swap_bytes
                                                                     : nullptr;
    if (!field) continue;
    unsigned long long kb = 0;
    if (sscanf(line.c_str() + line.find(':') + 1, "%llu", &kb) == 1) *field = static_cast<uint64_t>(kb) * 1024;
  }
}

std::optional<uint64_t> parse_stat_cpu_ticks(const std::string& text) {
  const size_t paren = text.rfind(')');  // the command may hold spaces and parentheses
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(paren + 1));
  std::string field;
  uint64_t utime = 0, stime = 0;
  // After ")": state is field 3 of the line, utime 14 and stime 15.
  for (int n = 3; n <= 15 && fields >> field; ++n) {
    if (n == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (n == 15) {
      stime = std::strtoull(field.c_str(), nullptr, 10);
      return utime + stime;
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> parse_open_files_limit(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  constexpr std::string_view kName = "Max open files";
  while (std::getline(lines, line)) {
    if (line.compare(0, kName.size(), kName) != 0) continue;
    std::istringstream fields(line.substr(kName.size()));
    std::string soft;
    fields >> soft;
    if (soft.empty() || soft == "unlimited") return std::nullopt;
    try {
      return static_cast<uint64_t>(std::stoull(soft));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<ProcessSample> read_process_sample(const std::string& proc_root, pid_t pid, uint64_t ts_ns,
                                                 bool with_rollup) {
  const std::string dir = fmt::format("{}/{}", proc_root, pid);
  ProcessSample s;
  s.pid = pid;
  s.ts_ns = ts_ns;
  if (auto text = read_text(dir + "/status")) parse_status(*text, s);
  if (with_rollup)
    if (auto text = read_text(dir + "/smaps_rollup")) parse_smaps_rollup(*text, s);
  s.fds = count_fds(dir + "/fd");
  if (auto text = read_text(dir + "/limits")) s.fd_limit = parse_open_files_limit(*text);
  struct statvfs shm {};
  if (statvfs((dir + "/root/dev/shm").c_str(), &shm) == 0 && shm.f_blocks > 0) {
    s.shm_size_bytes = static_cast<uint64_t>(shm.f_blocks) * shm.f_frsize;
    s.shm_free_bytes = static_cast<uint64_t>(shm.f_bavail) * shm.f_frsize;
  }
  if (auto wchan = read_text(dir + "/wchan"); wchan && !wchan->empty() && *wchan != "0") s.wchan = std::move(*wchan);
  if (!s.rss_bytes && !s.fds && !s.shm_size_bytes) return std::nullopt;
  return s;
}

struct ProcessSampler::Impl {
  PidSource pids;
  ProcessSamplerOptions options;
  std::thread thread;
  std::mutex mutex;  // guards stopping and the wake-up
  std::condition_variable wake;
  bool stopping = false;
  std::vector<ProcessSample> samples;  // the thread's own until it is joined
  uint64_t dropped = 0;
  std::atomic<uint64_t> cpu_ns{0};
  // The process CPU time (ns) from which each process's smaps_rollup may be read again.
  std::map<pid_t, uint64_t> next_rollup_cpu_ns;
  const double ns_per_tick = 1e9 / static_cast<double>(sysconf(_SC_CLK_TCK));

  std::optional<uint64_t> process_cpu_ns(pid_t pid) const {
    auto text = read_text(fmt::format("{}/{}/stat", options.proc_root, pid));
    auto ticks = text ? parse_stat_cpu_ticks(*text) : std::nullopt;
    if (!ticks) return std::nullopt;
    return static_cast<uint64_t>(static_cast<double>(*ticks) * ns_per_tick);
  }

  void sample_all() {
    const auto now = static_cast<uint64_t>(monotonic_ns());
    std::map<pid_t, uint64_t> next;
    std::vector<ProcessSample> round;
    for (pid_t pid : pids()) {
      const uint64_t used = process_cpu_ns(pid).value_or(0);
      auto due = next_rollup_cpu_ns.find(pid);
      const bool rollup = due == next_rollup_cpu_ns.end() || due->second <= used;
      const uint64_t began = rollup ? thread_cpu_ns() : 0;
      auto s = read_process_sample(options.proc_root, pid, now, rollup);
      if (!s) continue;
      next[pid] = rollup ? used + static_cast<uint64_t>(static_cast<double>(thread_cpu_ns() - began) /
                                                        options.rollup_share)
                         : due->second;
      if (options.on_round) round.push_back(*s);
      if (samples.size() < options.max_samples)
        samples.push_back(*s);
      else
        ++dropped;
    }
    next_rollup_cpu_ns.swap(next);  // processes that are gone are forgotten
    if (options.on_round) options.on_round(round);
  }

  void run() {
    std::unique_lock lock(mutex);
    while (!stopping) {
      lock.unlock();
      sample_all();
      cpu_ns = thread_cpu_ns();
      lock.lock();
      wake.wait_for(lock, options.interval, [this] { return stopping; });
    }
  }
};

ProcessSampler::ProcessSampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::unique_ptr<ProcessSampler> ProcessSampler::start(PidSource pids, const ProcessSamplerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->pids = std::move(pids);
  impl->options = options;
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->run(); });
  return std::unique_ptr<ProcessSampler>(new ProcessSampler(std::move(impl)));
}

std::vector<ProcessSample> ProcessSampler::stop() {
  if (!impl_->thread.joinable()) return {};
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  impl_->thread.join();
  return std::move(impl_->samples);
}

std::string ProcessSampler::note() const {
  if (impl_->dropped == 0) return {};
  return fmt::format("{} process samples beyond the first {} were not kept", impl_->dropped,
                     impl_->options.max_samples);
}

uint64_t ProcessSampler::cpu_ns() const { return impl_->cpu_ns.load(); }

ProcessSampler::~ProcessSampler() { (void)stop(); }

}  // namespace ingero::tracer

// SPDX-License-Identifier: Apache-2.0
#include "tracer/process_sampler.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "common/clock.h"

namespace ingero::tracer {
namespace {

constexpr long kProcSuperMagic = 0x9fa0;  // PROC_SUPER_MAGIC

// Calls f with each line of text, without its newline.
template <class F>
void for_each_line(std::string_view text, F&& f) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    f(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

// The first number in text after any blanks ("  123 kB" -> 123).
std::optional<uint64_t> leading_number(std::string_view text) {
  const size_t at = text.find_first_not_of(" \t");
  if (at == std::string_view::npos) return std::nullopt;
  uint64_t n = 0;
  const auto [end, error] = std::from_chars(text.data() + at, text.data() + text.size(), n);
  if (error != std::errc() || end == text.data() + at) return std::nullopt;
  return n;
}

}  // namespace

// Reads /proc files into a buffer it keeps: one open, one pread, one close, no allocation once the
// buffer holds the largest file. The files read here (status, stat, limits, smaps_rollup, wchan) are
// made in one piece when read: a read shorter than the buffer is the whole file. Not in the anonymous
// namespace: ProcessSampler::Impl holds one.
class ProcFileReader {
 public:
  std::optional<std::string_view> read(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    size_t size = 0;
    for (;;) {
      const ssize_t n = pread(fd, buffer_.data() + size, buffer_.size() - size, static_cast<off_t>(size));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      size += static_cast<size_t>(n);
      if (size < buffer_.size()) break;
      buffer_.resize(buffer_.size() * 2);  // a longer file than any before: read on
    }
    close(fd);
    if (size == 0) return std::nullopt;  // gone, or empty
    return std::string_view(buffer_.data(), size);
  }

 private:
  std::string buffer_ = std::string(8192, '\0');
};

namespace {

// Open descriptors: /proc/PID/fd's size from Linux 6.2 (the kernel counts them, no directory walk),
// else its entries (a descriptor-less process also reads 0 there, and is counted).
std::optional<uint64_t> count_fds(const std::string& dir, bool procfs) {
  struct stat st {};
  if (procfs && stat(dir.c_str(), &st) == 0 && st.st_size > 0) return static_cast<uint64_t>(st.st_size);
  DIR* d = opendir(dir.c_str());
  if (!d) return std::nullopt;
  uint64_t n = 0;
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

// The soft RLIMIT_NOFILE: prlimit where proc_root is the real /proc (a system call, not the text of
// every limit), else /proc/PID/limits. Empty when unlimited.
std::optional<uint64_t> open_files_limit(ProcFileReader& reader, const std::string& dir, pid_t pid, bool procfs) {
  rlimit limit{};
  if (procfs && prlimit(pid, RLIMIT_NOFILE, nullptr, &limit) == 0)
    return limit.rlim_cur == RLIM_INFINITY ? std::nullopt : std::optional<uint64_t>(limit.rlim_cur);
  auto text = reader.read(dir + "/limits");
  return text ? parse_open_files_limit(*text) : std::nullopt;
}

bool is_procfs(const std::string& root) {
  struct statfs fs {};
  return statfs(root.c_str(), &fs) == 0 && fs.f_type == kProcSuperMagic;
}

void read_rollup(ProcFileReader& reader, const std::string& dir, ProcessSample& s) {
  if (auto text = reader.read(dir + "/smaps_rollup")) parse_smaps_rollup(*text, s);
}

// One sample, smaps_rollup aside.
std::optional<ProcessSample> read_sample(ProcFileReader& reader, const std::string& dir, pid_t pid, uint64_t ts_ns,
                                         bool procfs) {
  ProcessSample s;
  s.pid = pid;
  s.ts_ns = ts_ns;
  if (auto text = reader.read(dir + "/status")) parse_status(*text, s);
  s.fds = count_fds(dir + "/fd", procfs);
  s.fd_limit = open_files_limit(reader, dir, pid, procfs);
  struct statvfs shm {};
  if (statvfs((dir + "/root/dev/shm").c_str(), &shm) == 0 && shm.f_blocks > 0) {
    s.shm_size_bytes = static_cast<uint64_t>(shm.f_blocks) * shm.f_frsize;
    s.shm_free_bytes = static_cast<uint64_t>(shm.f_bavail) * shm.f_frsize;
  }
  if (auto wchan = reader.read(dir + "/wchan"); wchan && *wchan != "0") s.wchan = std::string(*wchan);
  if (!s.rss_bytes && !s.fds && !s.shm_size_bytes) return std::nullopt;
  return s;
}

}  // namespace

void parse_smaps_rollup(std::string_view text, ProcessSample& sample) {
  for_each_line(text, [&](std::string_view line) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    const std::string_view key = line.substr(0, colon);
    std::optional<uint64_t>* field = key == "Rss"             ? &sample.rss_bytes
                                     : key == "Pss"           ? &sample.pss_bytes
                                     : key == "Private_Dirty" ? &sample.private_dirty_bytes
                                     : key == "Swap"          ? &sample.swap_bytes
                                                              : nullptr;
    if (!field) return;
    if (auto kb = leading_number(line.substr(colon + 1))) *field = *kb * 1024;
  });
}

void parse_status(std::string_view text, ProcessSample& sample) {
  for_each_line(text, [&](std::string_view line) {
    std::optional<uint64_t>* field = line.rfind("VmRSS:", 0) == 0    ? &sample.rss_bytes
                                     : line.rfind("VmSwap:", 0) == 0 ? &sample.swap_bytes
                                                                     : nullptr;
    if (!field) return;
    if (auto kb = leading_number(line.substr(line.find(':') + 1))) *field = *kb * 1024;
  });
}

std::optional<uint64_t> parse_stat_cpu_ticks(std::string_view text) {
  const size_t paren = text.rfind(')');  // the command may hold spaces and parentheses
  if (paren == std::string_view::npos) return std::nullopt;
  text.remove_prefix(paren + 1);
  // After ")": state is field 3 of the line, utime 14 and stime 15.
  uint64_t utime = 0;
  for (int n = 3; n <= 15; ++n) {
    const size_t start = text.find_first_not_of(' ');
    if (start == std::string_view::npos) return std::nullopt;
    text.remove_prefix(start);
    const size_t end = std::min(text.find(' '), text.size());
    if (n == 14) utime = leading_number(text.substr(0, end)).value_or(0);
    if (n == 15) return utime + leading_number(text.substr(0, end)).value_or(0);
    text.remove_prefix(end);
  }
  return std::nullopt;
}

std::optional<uint64_t> parse_open_files_limit(std::string_view text) {
  constexpr std::string_view kName = "Max open files";
  std::optional<uint64_t> limit;
  for_each_line(text, [&](std::string_view line) {
    if (line.substr(0, kName.size()) != kName) return;
    limit = leading_number(line.substr(kName.size()));  // "unlimited" is no number
  });
  return limit;
}

std::optional<ProcessSample> read_process_sample(const std::string& proc_root, pid_t pid, uint64_t ts_ns,
                                                 bool with_rollup) {
  ProcFileReader reader;
  const std::string dir = fmt::format("{}/{}", proc_root, pid);
  auto s = read_sample(reader, dir, pid, ts_ns, is_procfs(proc_root));
  if (s && with_rollup) read_rollup(reader, dir, *s);
  return s;
}

struct ProcessSampler::Impl {
  PidSource pids;
  ProcessSamplerOptions options;
  bool procfs = false;
  ProcFileReader reader;  // the thread's own
  std::thread thread;
  std::mutex mutex;  // guards stopping and the wake-up
  std::condition_variable wake;
  bool stopping = false;
  std::vector<ProcessSample> samples;  // the thread's own until it is joined
  uint64_t dropped = 0;
  std::atomic<uint64_t> cpu_ns{0};
  // Per process: what its smaps_rollup reads have cost so far (ns of this thread's CPU time), and a
  // read's cost per resident byte (the options' prior until its own first read).
  struct RollupBudget {
    uint64_t spent_ns = 0;
    double ns_per_byte = 0;
  };
  std::map<pid_t, RollupBudget> rollups;
  const double ns_per_tick = 1e9 / static_cast<double>(sysconf(_SC_CLK_TCK));

  std::optional<uint64_t> process_cpu_ns(const std::string& dir) {
    auto text = reader.read(dir + "/stat");
    auto ticks = text ? parse_stat_cpu_ticks(*text) : std::nullopt;
    if (!ticks) return std::nullopt;
    return static_cast<uint64_t>(static_cast<double>(*ticks) * ns_per_tick);
  }

  // A rollup is read when, with what the next one is expected to cost (its RSS x its last read's cost
  // per byte), the process's rollups stay within rollup_share of the CPU time it has run, the first
  // one's included.
  void maybe_read_rollup(const std::string& dir, ProcessSample& s, uint64_t used, std::map<pid_t, RollupBudget>& budgets) {
    auto [it, added] = budgets.emplace(s.pid, RollupBudget{0, options.rollup_ns_per_rss_mb / double(1 << 20)});
    RollupBudget& budget = it->second;
    if (auto known = rollups.find(s.pid); added && known != rollups.end()) budget = known->second;
    const double expected = static_cast<double>(s.rss_bytes.value_or(0)) * budget.ns_per_byte;
    if (static_cast<double>(budget.spent_ns) + expected > options.rollup_share * static_cast<double>(used)) return;
    const uint64_t began = static_cast<uint64_t>(thread_cpu_ns());
    read_rollup(reader, dir, s);
    const uint64_t took = static_cast<uint64_t>(thread_cpu_ns()) - began;
    budget.spent_ns += took;
    if (s.rss_bytes.value_or(0) > 0) budget.ns_per_byte = static_cast<double>(took) / static_cast<double>(*s.rss_bytes);
  }

  // The hang watch: since when the same processes have been quiet, and their CPU time then.
  std::optional<uint64_t> quiet_since_ns;
  uint64_t quiet_cpu_ns = 0;
  std::vector<pid_t> quiet_pids;
  bool hang_reported = false;

  void watch_for_hang(uint64_t now, const std::vector<pid_t>& sampled, uint64_t cpu_ns_total, bool all_asleep) {
    if (!options.on_hang || options.hang_after.count() <= 0) return;
    const double slack = ns_per_tick * static_cast<double>(sampled.size());
    const bool quiet = quiet_since_ns && sampled == quiet_pids &&
                       static_cast<double>(cpu_ns_total - std::min(cpu_ns_total, quiet_cpu_ns)) <=
                           options.hang_cpu_share * static_cast<double>(now - *quiet_since_ns) + slack;
    if (!quiet) {  // a new span starts here
      quiet_since_ns = now;
      quiet_cpu_ns = cpu_ns_total;
      quiet_pids = sampled;
      hang_reported = false;
      return;
    }
    if (hang_reported || !all_asleep || sampled.empty() ||
        now - *quiet_since_ns < static_cast<uint64_t>(options.hang_after.count()))
      return;
    hang_reported = true;
    options.on_hang(sampled, now);
  }

  void sample_all() {
    const auto now = static_cast<uint64_t>(monotonic_ns());
    std::map<pid_t, RollupBudget> budgets;
    std::vector<ProcessSample> round;
    std::vector<pid_t> sampled;
    uint64_t cpu_ns_total = 0;
    bool all_asleep = true;
    for (pid_t pid : pids()) {
      const std::string dir = fmt::format("{}/{}", options.proc_root, pid);
      auto s = read_sample(reader, dir, pid, now, procfs);
      if (!s) continue;
      const uint64_t used = process_cpu_ns(dir).value_or(0);
      sampled.push_back(pid);
      cpu_ns_total += used;
      all_asleep = all_asleep && s->wchan;
      maybe_read_rollup(dir, *s, used, budgets);
      if (options.on_round) round.push_back(*s);
      if (samples.size() < options.max_samples)
        samples.push_back(std::move(*s));
      else
        ++dropped;
    }
    rollups.swap(budgets);  // processes that are gone are forgotten
    if (options.on_round) options.on_round(round);
    std::sort(sampled.begin(), sampled.end());
    watch_for_hang(now, sampled, cpu_ns_total, all_asleep);
  }

  void run() {
    std::unique_lock lock(mutex);
    while (!stopping) {
      lock.unlock();
      sample_all();
      cpu_ns = static_cast<uint64_t>(thread_cpu_ns());
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
  impl->procfs = is_procfs(options.proc_root);
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

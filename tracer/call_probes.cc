// SPDX-License-Identifier: Apache-2.0
#include "tracer/call_probes.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/trace_contract.h"
#include "common/unique_fd.h"
#include "tracer/bpf_map_read.h"
#include "tracer/elf_symbols.h"

namespace ingero::tracer {

Status check_call_library(const std::string& flag, const std::string& path) {
  const std::string hint = "pass a libcudart.so, libcuda.so or libnccl.so file (ldconfig -p | grep -E 'libcud|libnccl')";
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::bad_input(fmt::format("{} {} cannot be read: {}", flag, path, std::strerror(errno)), hint);
  Elf64_Ehdr header{};
  const bool shared = ::pread(fd.get(), &header, sizeof header, 0) == static_cast<ssize_t>(sizeof header) &&
                      std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 && header.e_type == ET_DYN;
  if (!shared) return Error::bad_input(fmt::format("{} {} is not an ELF shared object", flag, path), hint);
  std::vector<std::string> names;
  for (const CallProbeSpec& spec : call_probe_specs()) names.emplace_back(contract::op_name(spec.op));
  auto defined = function_file_offsets(path, names);
  if (!defined) return Error::bad_input(fmt::format("{} {}: {}", flag, path, defined.error().message), hint);
  if (defined->empty())
    return Error::bad_input(
        fmt::format("{} {} defines none of the CUDA runtime, driver or NCCL functions ingero-bench probes", flag, path),
        hint);
  return {};
}

namespace {

uint64_t now_ns() { return static_cast<uint64_t>(monotonic_ns()); }

constexpr uint64_t kScopedCookie = uint64_t{IB_CALL_SCOPED} << 40;

// A change of op's probes begins or ends: the kernel times no call across one (cuda.bpf.c,
// call_edges: begun in the high 32 bits, ended in the low).
enum class Edge : uint64_t { begins = uint64_t{1} << 32, ends = 1 };
void count_edge(uint64_t* edges, uint16_t op, Edge edge) {
  if (edges && op < IB_OP_COUNT) __atomic_fetch_add(&edges[op], static_cast<uint64_t>(edge), __ATOMIC_SEQ_CST);
}

}  // namespace

CallProbes::CallProbes(CallProbePrograms programs, CudaDetail detail, SamplingPolicy policy, ProbeCost cost,
                       bool every_process)
    : programs_(programs), detail_(detail), policy_(policy), cost_(cost), every_process_(every_process) {}

// The stop whose result counts is the tracer's own, before this; here only what is left is detached.
CallProbes::~CallProbes() { (void)stop(now_ns()); }

Status CallProbes::attach(const Target& target, pid_t pid, bool scoped, Links& into) const {
  const UprobeSpec spec{target.path, target.offset, target.cookie | (scoped ? kScopedCookie : 0), false, pid};
  const auto op = static_cast<uint16_t>(IB_COOKIE_OP(target.cookie));
  count_edge(programs_.call_edges, op, Edge::begins);
  auto links = attach_call_probes(programs_.entry, programs_.exit, spec, target.return_probe, programs_.multi);
  count_edge(programs_.call_edges, op, Edge::ends);
  if (!links) return links.error();
  for (UprobeLink& link : *links) into.push_back(std::move(link));
  return {};
}

std::shared_ptr<std::atomic<uint64_t>> CallProbes::close(uint16_t op, Links links, std::function<void()> at_begin) {
  count_edge(programs_.call_edges, op, Edge::begins);
  return closer_.close(std::move(links), std::move(at_begin),
                       [edges = programs_.call_edges, op] { count_edge(edges, op, Edge::ends); });
}

// The function's probes in one process (pid 0: every process): one pair per target it maps.
CallProbes::Links CallProbes::attach_in(const Function& function, pid_t pid, bool scoped, Status& status) const {
  Links links;
  auto mapped = process_libraries_.find(pid);
  for (const Target& target : function.targets) {
    if (pid > 0 && (mapped == process_libraries_.end() || !mapped->second.count(target.match_path))) continue;
    if (Status s = attach(target, pid > 0 ? pid : -1, scoped, links); !s) status = s;
  }
  return links;
}

Result<ProbedLibrary> CallProbes::probe_library(const std::string& path, bool requested) {
  const CallLibrary kind = classify_library(path).value_or(CallLibrary::cuda_runtime);
  ProbedLibrary library{path, std::string(library_kind_name(kind)), {}, {}};
  const std::vector<PlannedProbe> plan = plan_probes(kind, detail_);
  std::vector<std::string> names;
  for (const PlannedProbe& probe : plan) names.emplace_back(contract::op_name(probe.spec->op));
  auto offsets = function_file_offsets(path, names);
  if (!offsets) {
    if (requested) return offsets.error();
    library.missing = names;
    return library;
  }
  std::error_code ignored;
  const std::string match_path = std::filesystem::weakly_canonical(path, ignored).string();
  std::lock_guard lock(mutex_);
  for (const PlannedProbe& probe : plan) {
    const std::string symbol(contract::op_name(probe.spec->op));
    auto offset = offsets->find(symbol);
    if (offset == offsets->end()) {
      library.missing.push_back(symbol);
      continue;
    }
    Target target{path, match_path, offset->second, probe.cookie, probe.return_probe};
    Function& function = functions_[probe.spec->op];
    if (function.per_process) {
      // Already per process: probe the processes that map this library.
      function.targets.push_back(target);
      for (auto& [pid, links] : function.processes)
        if (!sampling(pid, probe.spec->op) && process_libraries_[pid].count(match_path))
          (void)attach(target, pid, true, links);  // a process that exited meanwhile has nothing to probe
      library.attached.push_back(symbol);
      continue;
    }
    Links links;
    if (!attach(target, -1, false, links)) {
      library.missing.push_back(symbol);
      continue;
    }
    function.targets.push_back(target);
    for (UprobeLink& link : links) function.every_process.push_back(std::move(link));
    library.attached.push_back(symbol);
  }
  if (requested && library.attached.empty())
    return Error::bad_input(fmt::format("no CUDA or NCCL function could be probed in {}", path));
  return library;
}

// The probed libraries a process maps, read from its maps.
void CallProbes::read_libraries(pid_t pid) {
  const auto paths = mapped_call_libraries(pid);
  process_libraries_[pid].insert(paths.begin(), paths.end());
}

bool CallProbes::sampling(pid_t pid, uint16_t op) const {
  return std::any_of(sampled_.begin(), sampled_.end(),
                     [&](const Sampling& s) { return s.pid == pid && s.op == op && !s.ended; });
}

void CallProbes::track_processes(const std::map<pid_t, std::vector<std::string>>& mapped) {
  std::lock_guard lock(mutex_);
  for (auto it = process_libraries_.begin(); it != process_libraries_.end();)
    it = mapped.count(it->first) ? std::next(it) : process_libraries_.erase(it);
  for (const auto& [pid, paths] : mapped) process_libraries_[pid].insert(paths.begin(), paths.end());
  for (auto& [op, function] : functions_) {
    if (!function.per_process) continue;
    for (auto it = function.processes.begin(); it != function.processes.end();) {
      if (mapped.count(it->first) || sampling(it->first, op)) {
        ++it;
        continue;
      }
      close(op, std::move(it->second));
      it = function.processes.erase(it);
    }
    for (const auto& [pid, paths] : mapped) {
      if (function.processes.count(pid) || sampling(pid, op)) continue;
      Status ignored;  // a process that exits meanwhile has nothing to probe
      function.processes[pid] = attach_in(function, pid, true, ignored);
    }
  }
}

// Every thread's exact counters.
CallProbes::Counters CallProbes::read_counters(int call_stats_fd) {
  Counters counters;
  for (const auto& [key, slot] : read_map<ib_call_key, ib_call_slot>(call_stats_fd))
    counters[{key.tid, key.op}] = {slot.stats.pid, slot.stats.calls};
  return counters;
}

CallProbes::Counters CallProbes::read_counters() const { return read_counters(programs_.call_stats_fd); }

// One function's calls over a process's threads (pid 0: every process).
uint64_t CallProbes::calls_of(const Counters& counters, pid_t pid, uint16_t op) {
  uint64_t calls = 0;
  for (const auto& [key, c] : counters)
    if (key.second == op && (pid == 0 || c.pid == static_cast<uint32_t>(pid))) calls += c.calls;
  return calls;
}

// What a call of op costs its thread when probed; 0 for what this does not probe.
double CallProbes::cost_ns(uint32_t op) const {
  const Target* target = first_target(static_cast<uint16_t>(op));
  return target ? cost_.per_call_ns(target->return_probe) : 0;
}

bool CallProbes::return_probed(uint16_t op) const {
  const Target* target = first_target(op);
  return target && target->return_probe;
}

// A probed function's first target, whose probe kind its cost and gauge are taken from; none for what
// this does not probe.
const CallProbes::Target* CallProbes::first_target(uint16_t op) const {
  auto it = functions_.find(op);
  return it == functions_.end() || it->second.targets.empty() ? nullptr : &it->second.targets.front();
}

// Every traced process mapping the function's libraries gets exact probes of its own, then
// the kernel counts through those (scoped_ops), then the every-process probes go.
void CallProbes::make_per_process(uint16_t op, Function& function) {
  for (const auto& [pid, paths] : process_libraries_) {
    Status ignored;
    function.processes[pid] = attach_in(function, pid, true, ignored);
  }
  const uint32_t key = op;
  const uint8_t one = 1;
  bpf_map_update_elem(programs_.scoped_ops_fd, &key, &one, BPF_ANY);
  close(op, std::move(function.every_process));
  function.per_process = true;
}

// The threads of `pid` (0: of every process) that have called op.
std::vector<uint32_t> CallProbes::callers_of(const Counters& counters, pid_t pid, uint16_t op) const {
  std::vector<uint32_t> tids;
  for (const auto& [key, c] : counters)
    if (key.second == op && c.calls > 0 && (pid == 0 || c.pid == static_cast<uint32_t>(pid))) tids.push_back(key.first);
  return tids;
}

// What an open reads once its probes are in: the return program's time, the threads' on-CPU time,
// then the counters.
CallProbes::EdgeReading CallProbes::read_open_edge(const std::vector<uint32_t>& tids) const {
  EdgeReading edge;
  edge.return_program = read_program_run_time(programs_.timed_return_program_fd).value_or(ProgramRunTime{});
  edge.oncpu = programs_.oncpu.read(tids);
  edge.counters = read_counters();
  return edge;
}

// What a close runs as it begins: the counters on both sides of the threads' on-CPU time.
std::function<void()> CallProbes::read_close_edge_into(const std::vector<uint32_t>& tids,
                                                       std::shared_ptr<EdgeReading>& into) const {
  into = std::make_shared<EdgeReading>();
  return [reader = programs_.oncpu, fd = programs_.call_stats_fd, timed_fd = programs_.timed_return_program_fd, tids,
          edge = into] {
    edge->before = read_counters(fd);
    edge->oncpu = reader.read(tids);
    edge->counters = read_counters(fd);
    edge->return_program = read_program_run_time(timed_fd).value_or(ProgramRunTime{});
  };
}

void CallProbes::begin_sampling(pid_t pid, uint16_t op, uint64_t now) {
  auto it = functions_.find(op);
  if (it == functions_.end() || sampling(pid, op)) return;
  Function& function = it->second;
  const std::vector<uint32_t> callers = callers_of(read_counters(), pid, op);
  std::shared_ptr<EdgeReading> stop_edge;
  std::shared_ptr<std::atomic<uint64_t>> stopped;  // when this process's calls stopped being counted
  if (pid == 0) {
    stopped = close(op, std::move(function.every_process), read_close_edge_into(callers, stop_edge));
  } else {
    if (!process_libraries_.count(pid)) read_libraries(pid);
    if (!function.per_process) make_per_process(op, function);
    stopped = close(op, std::move(function.processes[pid]), read_close_edge_into(callers, stop_edge));
  }
  closer_.wait();  // the counters stand still from here until the first window
  Sampling s{pid, op, {}, WindowSchedule(policy_, now, now ^ (uint64_t{static_cast<uint32_t>(pid)} << 32 | op)),
             false, false, 0, 0, {}, nullptr, {}, 0, {}, {}, nullptr};
  if (return_probed(op)) s.calls.calibrated_return_program_ns = cost_.return_program_ns;
  // Sampling begins where counting stopped, not after the wait: the wait is detached time too.
  s.calls.since_ns = stopped->load();
  s.calls.calls_before = calls_of(read_counters(), pid, op);
  s.callers.mark(callers, stop_edge->oncpu);
  s.next_ns = s.schedule.next_start(s.calls.since_ns);
  sampled_.push_back(std::move(s));
}

void CallProbes::decide(uint64_t now) {
  const double seconds = (now - last_decision_ns_) * 1e-9;
  last_decision_ns_ = now;
  Counters counts = read_counters();
  std::set<std::pair<pid_t, uint16_t>> hot;
  for (const auto& [key, c] : counts) {
    auto function = functions_.find(static_cast<uint16_t>(key.second));
    if (seconds <= 0 || function == functions_.end() || function->second.targets.empty()) continue;
    auto last = last_counts_.find(key);
    const uint64_t before = last == last_counts_.end() ? 0 : std::min(last->second.calls, c.calls);
    const double rate = static_cast<double>(c.calls - before) / seconds;
    if (is_hot(rate, function->second.targets.front().return_probe, cost_, policy_))
      hot.insert({every_process_ ? 0 : static_cast<pid_t>(c.pid), static_cast<uint16_t>(key.second)});
  }
  last_counts_ = std::move(counts);
  for (const auto& [pid, op] : hot) begin_sampling(pid, op, now);
}

// Hands the window's probes to the closer; its calls are counted before the next window.
void CallProbes::end_window(Sampling& s) {
  Function& function = functions_[s.op];
  s.closing = close(s.op, std::move(s.pid == 0 ? function.every_process : function.processes[s.pid]),
                    read_close_edge_into(s.callers.tids(), s.at_close));
  s.attached = false;
}

// The last window's calls, read while no probe of it fires (its counters stand still), and
// the share of their threads' time every probe hit on them took meanwhile.
void CallProbes::count_window(Sampling& s) {
  if (!s.closing) return;
  uint64_t end = s.closing->load();
  if (end == 0) {  // its close has not begun yet: wait for every close
    closer_.wait();
    end = s.closing->load();
  }
  end = std::max(end, s.window_start);
  const Counters now = read_counters();
  // Per thread: its calls of the sampled function, and the time its hits on every probed function
  // took, from `from` to `to`.
  struct ThreadDelta {
    uint64_t calls = 0;
    double trapped_ns = 0;
  };
  auto deltas = [&](const Counters& from, const Counters& to) {
    std::map<uint32_t, ThreadDelta> by_tid;
    for (const auto& [key, c] : to) {
      if (s.pid != 0 && c.pid != static_cast<uint32_t>(s.pid)) continue;
      auto before = from.find(key);
      const uint64_t was = before == from.end() ? 0 : before->second.calls;
      const uint64_t d = c.calls - std::min(was, c.calls);
      if (d == 0) continue;
      by_tid[key.first].trapped_ns += static_cast<double>(d) * cost_ns(key.second);
      if (key.second == s.op) by_tid[key.first].calls += d;
    }
    return by_tid;
  };
  // On the wall clock: every call the window's probes counted, from its attach to its close.
  SampleWindow window{s.window_start, end, 0, 0, std::nullopt, {}};
  const double length = static_cast<double>(end - s.window_start);
  double weighted = 0;
  std::vector<uint32_t> new_callers;
  for (const auto& [tid, d] : deltas(s.at_start, now)) {
    window.calls += d.calls;
    weighted += static_cast<double>(d.calls) * (length > 0 ? d.trapped_ns / length : 0.0);
    if (d.calls && !s.callers.has(tid)) new_callers.push_back(tid);
  }
  if (window.calls) window.trapped_share = weighted / static_cast<double>(window.calls);
  // On the callers' clock: the calls of the threads timed, between the two readings of their time
  // (a new caller is timed from the next window).
  const EdgeReading closed = s.at_close ? *s.at_close : EdgeReading{};
  auto callers_calls = [&](const Counters& from, const Counters& to) {
    uint64_t calls = 0;
    for (const auto& [tid, d] : deltas(from, to))
      if (s.callers.has(tid)) calls += d.calls;
    return calls;
  };
  // Time a thread's close reading holds beyond the window's span ran before it (its open reading
  // was low): it belongs to the gap before, or the window's rate would read low.
  uint64_t before_window = 0;
  CallerTime time{0, s.callers.advance_within(closed.oncpu, end - s.window_start, before_window), 0, 0, 0};
  time.gap_before_ns = s.gap_oncpu_ns + before_window;
  for (const auto& [tid, d] : deltas(s.at_open, closed.counters)) {
    if (!s.callers.has(tid)) continue;
    time.calls += d.calls;
    time.trapped_ns += d.trapped_ns;
  }
  // Their calls probed outside those readings (as the probes went in, or came out) fall in the
  // gaps' time: counted already, so not estimated again. So do a window's calls when its callers
  // ran in none of it (none certainly between the readings: all were seen as the close read
  // their time).
  time.counted_in_gaps = callers_calls(s.at_start, s.at_open) + callers_calls(closed.counters, now);
  if (time.window_ns == 0 && callers_calls(s.at_open, closed.before) == 0) {
    time.counted_in_gaps += time.calls;
    time.calls = 0;
    time.trapped_ns = 0;
  }
  s.callers.mark(new_callers, programs_.oncpu.read(new_callers));
  if (s.callers.known()) window.callers = time;
  if (return_probed(s.op)) window.return_program = closed.return_program - s.program_at_open;
  s.calls.windows.push_back(window);
  s.closing.reset();
}

// Where a sampled function's estimate ends, with its callers' on-CPU time since the last window.
void CallProbes::end_sampling(Sampling& s, uint64_t until_ns) {
  s.calls.until_ns = until_ns;
  const uint64_t tail = s.callers.advance(programs_.oncpu.read(s.callers.tids()));
  if (s.callers.known()) s.calls.callers_tail_ns = tail;
}

void CallProbes::step(Sampling& s, uint64_t now) {
  if (s.ended || now < s.next_ns) return;
  if (s.attached) {
    end_window(s);
    // At least a millisecond between windows: the close removes the probes within it.
    s.next_ns = s.schedule.next_start(now_ns() + 1'000'000);
    return;
  }
  count_window(s);
  Function& function = functions_[s.op];
  s.at_start = read_counters();
  Status status;
  Links links = attach_in(function, s.pid, s.pid != 0, status);
  if (status && links.empty() && s.pid != 0) {
    // The last scan of the processes may have missed this one (its maps unreadable for a moment):
    // its own maps say whether it is gone.
    read_libraries(s.pid);
    links = attach_in(function, s.pid, true, status);
  }
  if (!status || links.empty()) {  // the process is gone (or its library): no more windows
    close(s.op, std::move(links));
    s.ended = true;
    end_sampling(s, now);
    return;
  }
  (s.pid == 0 ? function.every_process : function.processes[s.pid]) = std::move(links);
  s.window_start = now_ns();
  EdgeReading opened = read_open_edge(s.callers.tids());
  s.gap_oncpu_ns = s.callers.advance(opened.oncpu);
  s.at_open = std::move(opened.counters);
  s.program_at_open = opened.return_program;
  s.attached = true;
  s.next_ns = s.window_start + s.schedule.window_ns();
}

void CallProbes::run() {
  std::unique_lock lock(mutex_);
  last_decision_ns_ = now_ns();
  uint64_t next_decision = last_decision_ns_ + policy_.decide_every_ns;
  while (!stopping_) {
    uint64_t now = now_ns();
    if (now >= next_decision) {
      decide(now);
      next_decision = now + policy_.decide_every_ns;
    }
    uint64_t wake = next_decision;
    for (Sampling& s : sampled_) {
      step(s, now_ns());
      if (!s.ended) wake = std::min(wake, s.next_ns);
    }
    now = now_ns();
    if (wake > now) wake_.wait_for(lock, std::chrono::nanoseconds(wake - now));
  }
}

void CallProbes::start() {
  if (!policy_.enabled || thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

std::vector<SampledFunction> CallProbes::sampled_now(uint64_t now_ns) const {
  std::vector<SampledFunction> sampled;
  std::lock_guard lock(mutex_);
  for (const Sampling& s : sampled_) {
    SampledFunction f{static_cast<uint32_t>(s.pid), s.op, s.calls, {}};
    if (!s.ended) f.calls.until_ns = std::max(now_ns, f.calls.since_ns);
    f.estimate = estimate_calls(f.calls);
    sampled.push_back(std::move(f));
  }
  return sampled;
}

std::vector<SampledFunction> CallProbes::stop(uint64_t end_ns) {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  for (Sampling& s : sampled_)
    if (s.attached) end_window(s);
  closer_.wait();  // every probe is gone: the counters stand still
  std::vector<SampledFunction> sampled;
  for (Sampling& s : sampled_) {
    count_window(s);
    if (!s.ended) end_sampling(s, std::max(end_ns, s.calls.since_ns));
    sampled.push_back({static_cast<uint32_t>(s.pid), s.op, s.calls, {}});
  }
  sampled_.clear();
  functions_.clear();
  closer_.wait();
  return sampled;
}

}  // namespace ingero::tracer

#include "tracer/tracer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cuda.skel.h"
#include "io.skel.h"
#include "mem.skel.h"
#include "proc.skel.h"
#include "sched.skel.h"
#include "tracer/cuda_probes.h"
#include "tracer/event_writer.h"
#include "tracer/ops.h"
#include "common/sqlite.h"
#include "tracer/threads.h"

namespace ingero::tracer {

Tracer::~Tracer() = default;

namespace {

// ---- libbpf messages: quiet unless INGERO_BPF_VERBOSE is set; the last warning
// explains a failed load or attach.
std::mutex g_libbpf_mutex;
std::string g_last_libbpf_warning;

int libbpf_print(enum libbpf_print_level level, const char* format, va_list args) {
  static const bool verbose = getenv("INGERO_BPF_VERBOSE") != nullptr;
  if (verbose) return vfprintf(stderr, format, args);
  if (level != LIBBPF_WARN) return 0;
  char line[512];
  vsnprintf(line, sizeof line, format, args);
  std::lock_guard lock(g_libbpf_mutex);
  g_last_libbpf_warning = line;
  while (!g_last_libbpf_warning.empty() && g_last_libbpf_warning.back() == '\n') g_last_libbpf_warning.pop_back();
  return 0;
}

std::string last_libbpf_warning() {
  std::lock_guard lock(g_libbpf_mutex);
  return g_last_libbpf_warning.empty() ? "no details from libbpf" : g_last_libbpf_warning;
}

// ---- RAII owners
template <class Skel>
struct SkeletonDestroyer {
  void operator()(Skel* skel) const { Skel::destroy(skel); }
};
template <class Skel>
using SkeletonPtr = std::unique_ptr<Skel, SkeletonDestroyer<Skel>>;

struct LinkDestroyer {
  void operator()(bpf_link* link) const { bpf_link__destroy(link); }
};
using LinkPtr = std::unique_ptr<bpf_link, LinkDestroyer>;

struct RingBufferFree {
  void operator()(ring_buffer* rb) const { ring_buffer__free(rb); }
};

// ---- preconditions
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

bool has_capability(int cap) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  return data[cap / 32].effective & (1u << (cap % 32));
}

Status check_preconditions(const TraceOptions& opts) {
  const char* hint = "run with sudo, or pass --no-trace to run without tracing";
  bool can_trace = (has_capability(CAP_BPF) && has_capability(CAP_PERFMON)) || has_capability(CAP_SYS_ADMIN);
  if (!can_trace)
    return Error::failure(
        fmt::format("eBPF tracing needs root (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN); uid {} lacks them",
                    geteuid()),
        hint);
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    return Error::failure("eBPF tracing needs kernel BTF (/sys/kernel/btf/vmlinux is missing)",
                          "use a kernel built with CONFIG_DEBUG_INFO_BTF, or pass --no-trace");
  uint32_t ring = opts.ringbuf_bytes;
  if (ring < static_cast<uint32_t>(getpagesize()) || (ring & (ring - 1)) != 0)
    return Error::bad_input(fmt::format("ring buffer size {} must be a power of two of at least {} bytes", ring,
                                        getpagesize()));
  return {};
}

const char* const kLossNames[IB_LOSS_COUNT] = {"cuda", "sched", "proc", "cuda_inflight", "thread_stats"};

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::optional<pid_t> parent_of(pid_t pid) {
  // /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
  std::string stat = read_first_line(fmt::format("/proc/{}/stat", pid));
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  int ppid = 0;
  char state = 0;
  if (sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2) return std::nullopt;
  return ppid;
}

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string basename_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// Opens a skeleton and applies the run's configuration before load.
template <class Skel>
Result<SkeletonPtr<Skel>> open_skeleton(const char* name, const TraceOptions& opts) {
  SkeletonPtr<Skel> skel(Skel::open());
  if (!skel) return Error::failure(fmt::format("opening BPF object {}: {}", name, last_libbpf_warning()));
  skel->rodata->system_wide = opts.system_wide;
  skel->rodata->offcpu_min_ns = opts.offcpu_min_ns;
  skel->rodata->runq_min_ns = opts.runq_min_ns;
  skel->rodata->wakeup_bytes = opts.ringbuf_bytes / 4;
  for (bpf_map* ring : {skel->maps.cuda_ring, skel->maps.sched_ring, skel->maps.proc_ring})
    if (bpf_map__set_max_entries(ring, opts.ringbuf_bytes) != 0)
      return Error::failure(fmt::format("sizing ring buffer {}: {}", bpf_map__name(ring), strerror(errno)));
  return skel;
}

// Makes `user` use the maps `owner` created (same name), so every object shares one
// filter, one set of counters and one loss table. Object-private maps are left alone.
Status share_maps(bpf_object* owner, bpf_object* user) {
  bpf_map* map;
  bpf_object__for_each_map(map, user) {
    const char* name = bpf_map__name(map);
    if (strchr(name, '.')) continue;  // .rodata and friends are per object
    bpf_map* owned = bpf_object__find_map_by_name(owner, name);
    if (!owned) continue;
    if (int err = bpf_map__reuse_fd(map, bpf_map__fd(owned)); err)
      return Error::failure(fmt::format("sharing BPF map {}: {}", name, strerror(-err)));
  }
  return {};
}

template <class Skel>
Status load_skeleton(Skel* skel, const char* name, bpf_object* owner) {
  if (owner)
    if (Status s = share_maps(owner, skel->obj); !s) return s;
  if (int err = Skel::load(skel); err)
    return Error::failure(fmt::format("loading BPF object {}: {} ({})", name, strerror(-err), last_libbpf_warning()),
                          "pass --no-trace to run without tracing");
  return {};
}

template <class Skel>
Status attach_skeleton(Skel* skel, const char* name) {
  if (int err = Skel::attach(skel); err)
    return Error::failure(fmt::format("attaching BPF programs of {}: {} ({})", name, strerror(-err),
                                      last_libbpf_warning()),
                          "pass --no-trace to run without tracing");
  return {};
}

// Visits every key of a BPF hash map.
template <class Key, class Fn>
void for_each_key(int map_fd, Fn&& fn) {
  Key key{};
  Key next{};
  const Key* prev = nullptr;
  while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
    key = next;
    fn(key);
    prev = &key;
  }
}

class BpfTracer final : public Tracer {
 public:
  BpfTracer(const TraceOptions& opts, int64_t run_id) : opts_(opts), run_id_(run_id) {}
  ~BpfTracer() override { shutdown(); }

  Status init(const std::string& db_path);
  Status enroll(pid_t root_pid) override;
  void poll() override;
  Result<TraceSummary> stop() override;

 private:
  struct ProbedLibrary {
    std::string path;
    CudaLibrary kind;
    std::vector<std::string> attached;
    std::vector<std::string> missing;
  };

  Status load_and_attach();
  Status attach_cuda_library(const std::string& path, bool requested);
  static int on_ring_event(void* ctx, void* data, size_t size);
  void consume();
  void detach_all();
  void stop_consumer();
  void shutdown();
  std::vector<TraceLoss> collect_losses() const;
  Status write_totals(sqlite3* db, const std::vector<TraceLoss>& losses);
  Status write_threads(sqlite3* db);
  nlohmann::json cuda_probes_json() const;
  TraceSummary summarize(std::vector<TraceLoss> losses) const;

  const TraceOptions opts_;
  const int64_t run_id_;
  std::unique_ptr<EventWriter> writer_;

  SkeletonPtr<ingero_sched> sched_;
  SkeletonPtr<ingero_proc> proc_;
  SkeletonPtr<ingero_mem> mem_;
  SkeletonPtr<ingero_io> io_;
  SkeletonPtr<ingero_cuda> cuda_;
  std::vector<LinkPtr> uprobe_links_;
  std::unique_ptr<ring_buffer, RingBufferFree> rings_;

  std::atomic<bool> consuming_{false};
  std::thread consumer_;

  std::mutex threads_mutex_;
  ThreadTable threads_;
  pid_t root_pid_ = 0;

  std::vector<ProbedLibrary> libraries_;
  std::set<std::pair<dev_t, ino_t>> probed_files_;
  bool stopped_ = false;
};

Status BpfTracer::init(const std::string& db_path) {
  auto writer = EventWriter::start(db_path, run_id_, opts_.queue_capacity);
  if (!writer) return writer.error();
  writer_ = std::move(*writer);
  if (Status s = load_and_attach(); !s) return s;
  for (const std::string& path : opts_.cudart_paths)
    if (Status s = attach_cuda_library(path, true); !s) return s;
  consuming_ = true;
  consumer_ = std::thread([this] { consume(); });
  return {};
}

Status BpfTracer::load_and_attach() {
  libbpf_set_print(libbpf_print);
  auto sched = open_skeleton<ingero_sched>("sched", opts_);
  if (!sched) return sched.error();
  auto proc = open_skeleton<ingero_proc>("proc", opts_);
  if (!proc) return proc.error();
  auto mem = open_skeleton<ingero_mem>("mem", opts_);
  if (!mem) return mem.error();
  auto io = open_skeleton<ingero_io>("io", opts_);
  if (!io) return io.error();
  auto cuda = open_skeleton<ingero_cuda>("cuda", opts_);
  if (!cuda) return cuda.error();
  sched_ = std::move(*sched);
  proc_ = std::move(*proc);
  mem_ = std::move(*mem);
  io_ = std::move(*io);
  cuda_ = std::move(*cuda);

  // sched creates the shared maps; the others reuse them.
  if (Status s = load_skeleton(sched_.get(), "sched", nullptr); !s) return s;
  if (Status s = load_skeleton(proc_.get(), "proc", sched_->obj); !s) return s;
  if (Status s = load_skeleton(mem_.get(), "mem", sched_->obj); !s) return s;
  if (Status s = load_skeleton(io_.get(), "io", sched_->obj); !s) return s;
  if (Status s = load_skeleton(cuda_.get(), "cuda", sched_->obj); !s) return s;

  // proc first: a fork must enroll children before their first scheduler event.
  if (Status s = attach_skeleton(proc_.get(), "proc"); !s) return s;
  if (Status s = attach_skeleton(sched_.get(), "sched"); !s) return s;
  if (Status s = attach_skeleton(mem_.get(), "mem"); !s) return s;
  if (Status s = attach_skeleton(io_.get(), "io"); !s) return s;

  rings_.reset(ring_buffer__new(bpf_map__fd(sched_->maps.cuda_ring), on_ring_event, this, nullptr));
  if (!rings_) return Error::failure(fmt::format("creating ring buffer reader: {}", strerror(errno)));
  for (bpf_map* ring : {sched_->maps.sched_ring, sched_->maps.proc_ring})
    if (int err = ring_buffer__add(rings_.get(), bpf_map__fd(ring), on_ring_event, this); err)
      return Error::failure(fmt::format("adding ring buffer {}: {}", bpf_map__name(ring), strerror(-err)));
  return {};
}

Status BpfTracer::attach_cuda_library(const std::string& path, bool requested) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (requested) return Error::bad_input(fmt::format("CUDA library {} not found: {}", path, strerror(errno)));
    return {};
  }
  if (!probed_files_.insert({st.st_dev, st.st_ino}).second) return {};
  ProbedLibrary library{path, classify_cuda_library(path).value_or(CudaLibrary::runtime), {}, {}};
  for (const CudaProbeSpec& spec : cuda_probe_specs()) {
    if (spec.library != library.kind) continue;
    std::string symbol(op_name(spec.op));
    auto attach = [&](bpf_program* prog, bool retprobe) {
      bpf_uprobe_opts uprobe{};
      uprobe.sz = sizeof(uprobe);
      uprobe.func_name = symbol.c_str();
      uprobe.bpf_cookie = cuda_probe_cookie(spec);
      uprobe.retprobe = retprobe;
      return LinkPtr(bpf_program__attach_uprobe_opts(prog, -1, path.c_str(), 0, &uprobe));
    };
    LinkPtr entry = attach(cuda_->progs.cuda_call_entry, false);
    LinkPtr exit = entry ? attach(cuda_->progs.cuda_call_return, true) : nullptr;
    if (!entry || !exit) {
      library.missing.push_back(symbol);
      continue;
    }
    uprobe_links_.push_back(std::move(entry));
    uprobe_links_.push_back(std::move(exit));
    library.attached.push_back(symbol);
  }
  if (requested && library.attached.empty())
    return Error::bad_input(fmt::format("no CUDA function could be probed in {} ({})", path, last_libbpf_warning()));
  libraries_.push_back(std::move(library));
  return {};
}

Status BpfTracer::enroll(pid_t root_pid) {
  if (!sched_) return Error::failure("tracer is stopped");
  uint8_t one = 1;
  uint32_t key = static_cast<uint32_t>(root_pid);
  if (bpf_map_update_elem(bpf_map__fd(sched_->maps.tgid_filter), &key, &one, BPF_ANY) != 0)
    return Error::failure(fmt::format("enrolling pid {} in the trace filter: {}", root_pid, strerror(errno)));
  std::lock_guard lock(threads_mutex_);
  root_pid_ = root_pid;
  ThreadInfo& root = threads_.ensure(root_pid, root_pid);
  root.ppid = parent_of(root_pid);
  root.comm = read_first_line(fmt::format("/proc/{}/comm", root_pid));
  root.start_ns = monotonic_ns();
  return {};
}

void BpfTracer::poll() {
  if (stopped_ || !sched_ || !opts_.cudart_paths.empty()) return;
  std::vector<uint32_t> pids;
  for_each_key<uint32_t>(bpf_map__fd(sched_->maps.tgid_filter), [&](uint32_t pid) { pids.push_back(pid); });
  for (uint32_t pid : pids)
    for (const std::string& path : mapped_cuda_libraries(static_cast<pid_t>(pid)))
      (void)attach_cuda_library(path, false);
}

int BpfTracer::on_ring_event(void* ctx, void* data, size_t size) {
  auto* self = static_cast<BpfTracer*>(ctx);
  if (size < sizeof(ib_event)) return 0;
  ib_event event;
  memcpy(&event, data, sizeof event);
  if (event.op >= IB_OP_FORK && event.op <= IB_OP_RENAME) {
    if (event.op == IB_OP_EXIT || event.op == IB_OP_THREAD_EXIT) event.ret = exit_code_from_status(event.ret);
    std::lock_guard lock(self->threads_mutex_);
    self->threads_.apply(event);
  }
  self->writer_->push(event);
  return 0;
}

void BpfTracer::consume() {
  // Programs wake this thread only when a ring is a quarter full; otherwise it
  // drains every kDrainInterval.
  constexpr int kDrainIntervalMs = 10;
  while (consuming_.load(std::memory_order_relaxed)) {
    int n = ring_buffer__poll(rings_.get(), kDrainIntervalMs);
    if (n >= 0) n = ring_buffer__consume(rings_.get());
    if (n < 0 && n != -EINTR) {
      fprintf(stderr, "ingero-bench: trace ring buffer poll failed: %s\n", strerror(-n));
      return;
    }
  }
}

void BpfTracer::detach_all() {
  uprobe_links_.clear();
  if (proc_) ingero_proc::detach(proc_.get());
  if (sched_) ingero_sched::detach(sched_.get());
  if (mem_) ingero_mem::detach(mem_.get());
  if (io_) ingero_io::detach(io_.get());
}

void BpfTracer::stop_consumer() {
  consuming_ = false;
  if (consumer_.joinable()) consumer_.join();
  if (rings_) ring_buffer__consume(rings_.get());  // what arrived after the last poll
}

void BpfTracer::shutdown() {
  detach_all();
  stop_consumer();
  if (writer_) (void)writer_->finish();
  rings_.reset();
  cuda_.reset();
  io_.reset();
  mem_.reset();
  proc_.reset();
  sched_.reset();
  stopped_ = true;
}

std::vector<TraceLoss> BpfTracer::collect_losses() const {
  std::vector<uint64_t> dropped(IB_LOSS_COUNT, 0);
  int losses_fd = bpf_map__fd(sched_->maps.losses);
  for (uint32_t i = 0; i < IB_LOSS_COUNT; ++i) bpf_map_lookup_elem(losses_fd, &i, &dropped[i]);

  std::vector<uint64_t> offered(IB_RING_COUNT, 0);
  int cpus = libbpf_num_possible_cpus();
  std::vector<uint64_t> per_cpu(cpus > 0 ? cpus : 1);
  int offered_fd = bpf_map__fd(sched_->maps.ring_offered);
  for (uint32_t ring = 0; ring < IB_RING_COUNT; ++ring)
    if (bpf_map_lookup_elem(offered_fd, &ring, per_cpu.data()) == 0)
      for (uint64_t n : per_cpu) offered[ring] += n;

  std::vector<TraceLoss> losses;
  for (int i = 0; i < IB_LOSS_COUNT; ++i)
    losses.push_back({kLossNames[i], dropped[i], i < IB_RING_COUNT ? std::optional(offered[i]) : std::nullopt});
  uint64_t queued = writer_->written() + writer_->failed();
  losses.push_back({"queue", writer_->dropped(), queued + writer_->dropped()});
  losses.push_back({"writer", writer_->failed(), queued});
  return losses;
}

Status BpfTracer::write_totals(sqlite3* db, const std::vector<TraceLoss>& losses) {
  auto stats = sql::Statement::prepare(
      db,
      "INSERT OR REPLACE INTO thread_stats(run_id, tid, pid, voluntary_switches, involuntary_switches, oncpu_ns, "
      "offcpu_ns, offcpu_max_ns, runq_count, runq_ns, page_allocs, page_alloc_bytes, page_faults, io_count, "
      "io_bytes, io_ns) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!stats) return stats.error();
  Status status;
  int stats_fd = bpf_map__fd(sched_->maps.thread_stats);
  for_each_key<uint32_t>(stats_fd, [&](uint32_t tid) {
    ib_thread_stats s{};
    if (!status || bpf_map_lookup_elem(stats_fd, &tid, &s) != 0) return;
    {
      std::lock_guard lock(threads_mutex_);
      threads_.ensure(static_cast<pid_t>(tid), static_cast<pid_t>(s.pid));
    }
    const uint64_t values[] = {s.voluntary_switches, s.involuntary_switches, s.oncpu_ns,   s.offcpu_ns,
                               s.offcpu_max_ns,      s.runq_count,           s.runq_ns,    s.page_allocs,
                               s.page_alloc_bytes,   s.page_faults,          s.io_count,   s.io_bytes,
                               s.io_ns};
    stats->bind(1, run_id_).bind(2, int64_t{tid}).bind(3, int64_t{s.pid});
    for (size_t i = 0; i < std::size(values); ++i) stats->bind(4 + static_cast<int>(i), int64_t(values[i]));
    status = stats->run();
  });
  if (!status) return status;

  auto hist = sql::Statement::prepare(
      db, "INSERT OR REPLACE INTO histograms(run_id, pid, metric, slot, count) VALUES(?, ?, ?, ?, ?)");
  if (!hist) return hist.error();
  static const char* const kMetricNames[IB_HIST_COUNT] = {"runq_us", "offcpu_us", "io_us"};
  int hist_fd = bpf_map__fd(sched_->maps.histograms);
  for_each_key<ib_hist_key>(hist_fd, [&](const ib_hist_key& key) {
    ib_hist h{};
    if (!status || key.metric >= IB_HIST_COUNT || bpf_map_lookup_elem(hist_fd, &key, &h) != 0) return;
    for (int slot = 0; slot < IB_HIST_SLOTS && status; ++slot)
      if (h.slots[slot])
        status = hist->bind(1, run_id_)
                     .bind(2, int64_t{key.pid})
                     .bind(3, std::string_view(kMetricNames[key.metric]))
                     .bind(4, int64_t{slot})
                     .bind(5, int64_t(h.slots[slot]))
                     .run();
  });
  if (!status) return status;

  auto loss = sql::Statement::prepare(
      db, "INSERT OR REPLACE INTO losses(run_id, source, dropped, offered) VALUES(?, ?, ?, ?)");
  if (!loss) return loss.error();
  for (const TraceLoss& row : losses) {
    loss->bind(1, run_id_).bind(2, row.source).bind(3, int64_t(row.dropped));
    row.offered ? loss->bind(4, int64_t(*row.offered)) : loss->bind_null(4);
    if (Status s = loss->run(); !s) return s;
  }

  auto setting = sql::Statement::prepare(db, "INSERT OR REPLACE INTO run_settings(run_id, key, value) VALUES(?, ?, ?)");
  if (!setting) return setting.error();
  const std::pair<const char*, std::string> settings[] = {
      {"offcpu_min_ns", std::to_string(opts_.offcpu_min_ns)},
      {"runq_min_ns", std::to_string(opts_.runq_min_ns)},
      {"ringbuf_bytes", std::to_string(opts_.ringbuf_bytes)},
      {"queue_capacity", std::to_string(opts_.queue_capacity)},
      {"system_wide", opts_.system_wide ? "1" : "0"},
      {"cuda_discovery", opts_.cudart_paths.empty() ? "maps" : "explicit"},
  };
  for (auto& [key, value] : settings)
    if (Status s = setting->bind(1, run_id_).bind(2, std::string_view(key)).bind(3, value).run(); !s) return s;

  if (Status s = write_threads(db); !s) return s;

  auto probes = sql::Statement::prepare(db, "UPDATE runs SET cuda_probes = ? WHERE run_id = ?");
  if (!probes) return probes.error();
  return probes->bind(1, cuda_probes_json().dump()).bind(2, run_id_).run();
}

Status BpfTracer::write_threads(sqlite3* db) {
  auto insert = sql::Statement::prepare(
      db,
      "INSERT OR REPLACE INTO threads(run_id, tid, pid, ppid, comm, role, start_ns, exit_ns, exit_code) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.error();
  std::lock_guard lock(threads_mutex_);
  for (const auto& [tid, t] : threads_.threads()) {
    std::string comm = t.comm;
    if (comm.empty()) comm = read_first_line(fmt::format("/proc/{}/task/{}/comm", t.pid, tid));
    auto bind_optional = [&](int index, auto value) {
      value ? insert->bind(index, int64_t(*value)) : insert->bind_null(index);
    };
    insert->bind(1, run_id_).bind(2, int64_t{tid}).bind(3, int64_t{t.pid});
    bind_optional(4, t.ppid);
    insert->bind(5, std::string_view(comm)).bind(6, thread_role(tid, comm, root_pid_));
    bind_optional(7, t.start_ns);
    bind_optional(8, t.exit_ns);
    bind_optional(9, t.exit_code);
    if (Status s = insert->run(); !s) return s;
  }
  return {};
}

nlohmann::json BpfTracer::cuda_probes_json() const {
  nlohmann::json libraries = nlohmann::json::array();
  for (const ProbedLibrary& lib : libraries_)
    libraries.push_back({{"path", lib.path},
                         {"kind", lib.kind == CudaLibrary::runtime ? "runtime" : "driver"},
                         {"attached", lib.attached},
                         {"missing", lib.missing}});
  bool traced = std::any_of(libraries_.begin(), libraries_.end(),
                            [](const ProbedLibrary& lib) { return !lib.attached.empty(); });
  return {{"traced", traced},
          {"discovery", opts_.cudart_paths.empty() ? "maps" : "explicit"},
          {"libraries", libraries}};
}

TraceSummary BpfTracer::summarize(std::vector<TraceLoss> losses) const {
  TraceSummary summary;
  summary.events_written = writer_->written();
  for (const TraceLoss& loss : losses)
    if (loss.source != "thread_stats") summary.events_dropped += loss.dropped;  // that one loses totals, not events
  summary.losses = std::move(losses);
  for (const ProbedLibrary& lib : libraries_) {
    if (!lib.attached.empty()) summary.cuda_traced = true;
    summary.cuda_libraries.push_back(lib.path);
    for (const std::string& symbol : lib.missing) summary.missing_symbols.push_back(basename_of(lib.path) + ":" + symbol);
  }
  return summary;
}

Result<TraceSummary> BpfTracer::stop() {
  if (stopped_ || !sched_) return Error::failure("tracer already stopped");
  detach_all();
  stop_consumer();
  Status written = writer_->finish();
  std::vector<TraceLoss> losses = collect_losses();
  Status totals = write_totals(writer_->connection(), losses);
  TraceSummary summary = summarize(std::move(losses));
  shutdown();
  if (!written) return written.error();
  if (!totals) return totals.error();
  std::string lost;
  for (const TraceLoss& loss : summary.losses)
    if (loss.dropped) lost += fmt::format("{}{} {}", lost.empty() ? "" : ", ", loss.source, loss.dropped);
  if (!lost.empty())
    fprintf(stderr,
            "ingero-bench: WARNING: the trace LOST events (%s); see the losses table. Totals in thread_stats "
            "are exact, individual events are incomplete.\n",
            lost.c_str());
  return summary;
}

}  // namespace

Result<std::unique_ptr<Tracer>> Tracer::start(const TraceOptions& opts, const std::string& db_path, int64_t run_id) {
  if (Status s = check_preconditions(opts); !s) return s.error();
  auto tracer = std::make_unique<BpfTracer>(opts, run_id);
  if (Status s = tracer->init(db_path); !s) return s.error();  // the destructor detaches what was attached
  return std::unique_ptr<Tracer>(std::move(tracer));
}

}  // namespace ingero::tracer

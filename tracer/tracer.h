// The embedded eBPF tracer. Life cycle, driven by the harness:
//
//   auto t = Tracer::start(opts, db_path, run_id);   // load + attach; writer thread starts
//   spawn the traced child paused; t->enroll(child_pid); release the child
//   while child runs: t->poll();                      // every ~20-50 ms: attach CUDA uprobes to
//                                                     // libraries the tree has newly mapped
//   t->stop();                                        // detach, drain, write totals + losses
//
// Destruction without stop() still detaches every probe and closes every map.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace ingero::tracer {

struct TraceOptions {
  bool system_wide = false;                  // no tgid filter
  std::vector<std::string> cudart_paths;     // --cudart: probe these instead of discovering
  uint64_t offcpu_min_ns = 100'000;          // stream off-CPU intervals at least this long
  uint64_t runq_min_ns = 100'000;            // stream run-queue waits at least this long
  uint32_t ringbuf_bytes = 32u << 20;        // per ring buffer (power of two, >= page size)
  size_t queue_capacity = 1u << 20;          // events buffered between ring consumer and writer
};

// One row of the losses table.
struct TraceLoss {
  std::string source;              // 'cuda' | 'sched' | 'proc' | 'cuda_inflight' | 'thread_stats' | 'queue' | 'writer'
  uint64_t dropped = 0;
  std::optional<uint64_t> offered;  // events the source tried to deliver, where counted
};

struct TraceSummary {
  uint64_t events_written = 0;
  uint64_t events_dropped = 0;               // kernel ring reservations that failed + in-flight CUDA
                                             // calls that found no map slot + queue overflow
  std::vector<TraceLoss> losses;             // as written to the losses table
  std::vector<std::string> cuda_libraries;   // library files probed
  std::vector<std::string> missing_symbols;  // "libcuda.so.1:cuMemcpyAsync" style
  bool cuda_traced = false;                  // false: no CUDA library found, CUDA calls not traced
};

class Tracer {
 public:
  // Not root / no BPF / no BTF: Error::failure naming what is missing and suggesting
  // sudo or --no-trace; nothing is left attached.
  static Result<std::unique_ptr<Tracer>> start(const TraceOptions& opts, const std::string& db_path,
                                               int64_t run_id);
  virtual ~Tracer();

  // Adds the root of the traced tree to the in-kernel filter; its descendants are
  // enrolled by the kernel as they are forked.
  virtual Status enroll(pid_t root_pid) = 0;
  // Attaches CUDA probes to libraries the tree has mapped since the last call
  // (nothing to do when cudart_paths were given).
  virtual void poll() = 0;
  // Detaches, drains, writes totals, losses, settings and threads. Call once.
  virtual Result<TraceSummary> stop() = 0;
};

}  // namespace ingero::tracer

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
#include <string>
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

struct TraceSummary {
  uint64_t events_written = 0;
  uint64_t events_dropped = 0;               // kernel ring reservations that failed + queue overflow
  std::vector<std::string> cuda_libraries;   // library files probed
  std::vector<std::string> missing_symbols;  // "libcuda.so.1:cuMemcpyAsync" style
  bool cuda_traced = false;
};

class Tracer {
 public:
  // Not root / no BPF / no BTF: Error::failure naming what is missing and suggesting
  // sudo or --no-trace; nothing is left attached.
  static Result<std::unique_ptr<Tracer>> start(const TraceOptions& opts, const std::string& db_path,
                                               int64_t run_id);
  virtual ~Tracer();

  virtual Status enroll(pid_t root_pid) = 0;
  virtual void poll() = 0;
  virtual Result<TraceSummary> stop() = 0;
};

}  // namespace ingero::tracer

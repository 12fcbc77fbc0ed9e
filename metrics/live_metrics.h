// SPDX-License-Identifier: Apache-2.0
// The live metrics registry: prometheus-cpp's counters, gauges and histograms, fed by the tracer's
// live totals (tracer/live_totals.h). Names, types and labels follow Prometheus's conventions and are
// listed in docs/metrics.md: base units, _total on counters, histograms rather than percentiles,
// labels of low cardinality; job and instance are left to the scraper.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "tracer/live_totals.h"

namespace ingero::metrics {

// The CUDA call latency histogram's upper bounds in seconds: every other boundary of the kernel's
// log2 nanosecond slots (2^10 ns = 1.024 µs ... 2^34 ns = 17.2 s), so that each slot falls whole
// into one bucket.
std::vector<double> call_latency_bounds();

class LiveMetrics final : public tracer::LiveSink {
 public:
  LiveMetrics();
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }
  // Counters advance by what the totals gained since the last call (a new run_id: since zero), so
  // that they keep counting across a sweep's runs and never go back.
  void publish(const tracer::LiveTotals& totals) override;

 private:
  void advance(prometheus::Family<prometheus::Counter>& family, const prometheus::Labels& labels, double total);
  void advance(prometheus::Family<prometheus::Histogram>& family, const prometheus::Labels& labels,
               const std::vector<double>& bounds, const std::vector<double>& counts, double sum);
  void publish_loaders(const std::vector<tracer::LiveLoaderWaits>& loaders);
  void publish_threads(const std::vector<tracer::LiveThreadGroup>& threads);
  void publish_calls(const std::vector<tracer::LiveCalls>& calls);
  void publish_health(const tracer::LiveTotals& totals);
  // Sets the gauges of what is there now; those of groups that went (their processes exited) are removed.
  void set_present(prometheus::Family<prometheus::Gauge>& family,
                   const std::vector<std::pair<prometheus::Labels, double>>& values);

  std::mutex mutex_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& wait_seconds_;
  prometheus::Family<prometheus::Counter>& batches_;
  prometheus::Family<prometheus::Histogram>& wait_histogram_;
  prometheus::Family<prometheus::Gauge>& loader_info_;
  prometheus::Family<prometheus::Counter>& cpu_seconds_;
  prometheus::Family<prometheus::Counter>& offcpu_seconds_;
  prometheus::Family<prometheus::Counter>& runqueue_seconds_;
  prometheus::Family<prometheus::Counter>& page_faults_;
  prometheus::Family<prometheus::Counter>& copy_on_write_bytes_;
  prometheus::Family<prometheus::Counter>& cuda_calls_;
  prometheus::Family<prometheus::Counter>& cuda_errors_;
  prometheus::Family<prometheus::Histogram>& cuda_call_seconds_;
  prometheus::Family<prometheus::Gauge>& gpu_busy_;
  prometheus::Family<prometheus::Counter>& events_lost_;
  prometheus::Family<prometheus::Gauge>& tracing_cost_;
  prometheus::Family<prometheus::Gauge>& resident_bytes_;
  prometheus::Family<prometheus::Gauge>& private_dirty_bytes_;
  prometheus::Family<prometheus::Gauge>& open_fds_;
  prometheus::Family<prometheus::Gauge>& fd_limit_;
  prometheus::Family<prometheus::Gauge>& processes_;
  prometheus::Family<prometheus::Gauge>& shm_size_;
  prometheus::Family<prometheus::Gauge>& shm_free_;
  prometheus::Family<prometheus::Counter>& oom_kills_;
  prometheus::Family<prometheus::Gauge>& stalled_;

  int64_t run_id_ = -1;
  // What each series' total was at the last publish of this run (key: name and labels).
  std::map<std::string, double> last_;
  std::map<std::string, std::vector<double>> last_buckets_;
  std::map<const void*, std::set<prometheus::Gauge*>> present_;  // by family
};

}  // namespace ingero::metrics

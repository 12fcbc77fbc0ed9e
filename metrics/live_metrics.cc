// SPDX-License-Identifier: Apache-2.0
#include "metrics/live_metrics.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ingero::metrics {

namespace {

using prometheus::Labels;

constexpr int kFirstBoundSlot = 10;  // 2^10 ns
constexpr int kLastBoundSlot = 34;   // 2^34 ns
constexpr int kBoundStep = 2;

std::string series_key(const std::string& name, const Labels& labels) {
  std::string key = name;
  for (const auto& [k, v] : labels) key += fmt::format("|{}={}", k, v);
  return key;
}

// role and rank; a process without a rank has no rank label (not an empty one).
Labels role_rank(const std::string& role, const std::optional<int>& rank) {
  Labels labels{{"role", role}};
  if (rank) labels["rank"] = std::to_string(*rank);
  return labels;
}

double seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

prometheus::Family<prometheus::Gauge>& gauge(prometheus::Registry& registry, const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
}

}  // namespace

std::vector<double> call_latency_bounds() {
  std::vector<double> bounds;
  for (int b = kFirstBoundSlot; b <= kLastBoundSlot; b += kBoundStep) bounds.push_back(std::ldexp(1.0, b) / 1e9);
  return bounds;
}

LiveMetrics::LiveMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      wait_seconds_(prometheus::BuildCounter()
                        .Name("ingero_dataloader_wait_seconds_total")
                        .Help("Time the training loop waited for DataLoader batches (next() until the batch came)")
                        .Register(*registry_)),
      batches_(prometheus::BuildCounter()
                   .Name("ingero_dataloader_batches_total")
                   .Help("DataLoader batches the training loop received")
                   .Register(*registry_)),
      wait_histogram_(prometheus::BuildHistogram()
                          .Name("ingero_dataloader_wait_seconds")
                          .Help("Each batch's wait for the DataLoader")
                          .Register(*registry_)),
      loader_info_(prometheus::BuildGauge()
                       .Name("ingero_dataloader_info")
                       .Help("A DataLoader's knobs as labels (value 1)")
                       .Register(*registry_)),
      cpu_seconds_(prometheus::BuildCounter()
                       .Name("ingero_cpu_seconds_total")
                       .Help("On-CPU time of the traced threads")
                       .Register(*registry_)),
      offcpu_seconds_(prometheus::BuildCounter()
                          .Name("ingero_offcpu_seconds_total")
                          .Help("Off-CPU time of the traced threads, by why they were off (preempted, blocked, io)")
                          .Register(*registry_)),
      runqueue_seconds_(prometheus::BuildCounter()
                            .Name("ingero_runqueue_seconds_total")
                            .Help("Time the traced threads were runnable and waited for a CPU")
                            .Register(*registry_)),
      page_faults_(prometheus::BuildCounter()
                       .Name("ingero_page_faults_total")
                       .Help("User page faults of the traced threads")
                       .Register(*registry_)),
      copy_on_write_bytes_(prometheus::BuildCounter()
                               .Name("ingero_copy_on_write_bytes_total")
                               .Help("Bytes the traced threads copied on write: a forked DataLoader worker's growth")
                               .Register(*registry_)),
      cuda_calls_(prometheus::BuildCounter()
                      .Name("ingero_cuda_calls_total")
                      .Help("Calls of a probed CUDA or NCCL function (estimated=\"true\": estimated from a duty cycle)")
                      .Register(*registry_)),
      cuda_errors_(prometheus::BuildCounter()
                       .Name("ingero_cuda_call_errors_total")
                       .Help("Probed CUDA or NCCL calls that returned an error")
                       .Register(*registry_)),
      cuda_call_seconds_(prometheus::BuildHistogram()
                             .Name("ingero_cuda_call_seconds")
                             .Help("Latency of the probed CUDA or NCCL calls that were timed")
                             .Register(*registry_)),
      gpu_busy_(prometheus::BuildGauge()
                    .Name("ingero_gpu_busy_ratio")
                    .Help("Share of the last sampling period in which a kernel ran on the GPU (NVML), 0-1")
                    .Register(*registry_)),
      events_lost_(prometheus::BuildCounter()
                       .Name("ingero_events_lost_total")
                       .Help("Trace events that could not be delivered, by the buffer that lost them")
                       .Register(*registry_)),
      tracing_cost_(prometheus::BuildGauge()
                        .Name("ingero_tracing_cost_ratio")
                        .Help("What the probes and the tracer's kernel programs cost the traced threads, over "
                              "their on-CPU time")
                        .Register(*registry_)),
      resident_bytes_(gauge(*registry_, "ingero_process_resident_bytes",
                            "Resident memory of the traced processes of a role and rank, summed (last sample)")),
      private_dirty_bytes_(gauge(*registry_, "ingero_process_private_dirty_bytes",
                                 "Private dirty memory (smaps_rollup) of the traced processes of a role and rank, "
                                 "summed: copy-on-write growth of DataLoader workers shows here")),
      open_fds_(gauge(*registry_, "ingero_process_open_fds",
                      "Open file descriptors: the most any traced process of a role and rank has")),
      fd_limit_(gauge(*registry_, "ingero_process_fd_limit",
                      "Soft RLIMIT_NOFILE: the lowest among the traced processes of a role and rank")),
      processes_(gauge(*registry_, "ingero_processes", "Traced processes of a role and rank (last sample)")),
      shm_size_(gauge(*registry_, "ingero_shm_size_bytes", "Size of the /dev/shm the traced processes see")),
      shm_free_(gauge(*registry_, "ingero_shm_free_bytes",
                      "Free bytes of /dev/shm: the least any traced process sees (its own mount namespace)")),
      oom_kills_(prometheus::BuildCounter()
                     .Name("ingero_oom_kills_total")
                     .Help("Traced processes the kernel's OOM killer killed, by the victim's role")
                     .Register(*registry_)),
      stalled_(gauge(*registry_, "ingero_stalled_seconds",
                     "How long every thread of a rank's job (main loop, workers, pin thread) has been off the CPU; "
                     "0 while one runs. With no batch past --hang-after-s: a hang")) {}

void LiveMetrics::advance(prometheus::Family<prometheus::Counter>& family, const Labels& labels, double total) {
  double& last = last_[series_key(family.GetName(), labels)];
  prometheus::Counter& counter = family.Add(labels);
  if (total > last) counter.Increment(total - last);
  last = std::max(last, total);
}

void LiveMetrics::advance(prometheus::Family<prometheus::Histogram>& family, const Labels& labels,
                          const std::vector<double>& bounds, const std::vector<double>& counts, double sum) {
  const std::string key = series_key(family.GetName(), labels);
  std::vector<double>& last = last_buckets_[key];
  last.resize(counts.size() + 1, 0);  // the buckets, then the sum
  std::vector<double> increments(counts.size(), 0);
  bool any = false;
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i] > last[i]) {
      increments[i] = counts[i] - last[i];
      last[i] = counts[i];
      any = true;
    }
  prometheus::Histogram& histogram = family.Add(labels, bounds);
  const double sum_increment = sum > last.back() ? sum - last.back() : 0;
  last.back() = std::max(last.back(), sum);
  if (any || sum_increment > 0) histogram.ObserveMultiple(increments, sum_increment);
}

void LiveMetrics::publish_loaders(const std::vector<tracer::LiveLoaderWaits>& loaders) {
  const std::vector<double> bounds(tracer::kBatchWaitBounds.begin(), tracer::kBatchWaitBounds.end());
  for (const tracer::LiveLoaderWaits& l : loaders) {
    Labels labels = role_rank(l.role, l.rank);
    if (l.loader >= 0) labels["loader"] = std::to_string(l.loader);
    if (l.estimated) labels["estimated"] = "true";
    if (!l.knobs.empty()) {
      Labels info = labels;
      info.erase("role");
      for (const auto& [knob, value] : l.knobs) info[knob] = value;
      loader_info_.Add(info).Set(1);
    }
    // A loader built but not iterated yet is served at 0, so that increase() over the job counts its first waits.
    advance(wait_seconds_, labels, seconds(l.wait_ns));
    advance(batches_, labels, static_cast<double>(l.batches));
    std::vector<double> counts(l.wait_buckets.begin(), l.wait_buckets.end());
    counts.resize(bounds.size() + 1, 0);
    advance(wait_histogram_, labels, bounds, counts, seconds(l.wait_ns));
  }
}

void LiveMetrics::publish_threads(const std::vector<tracer::LiveThreadGroup>& threads) {
  for (const tracer::LiveThreadGroup& g : threads) {
    const Labels labels = role_rank(g.role, g.rank);
    advance(cpu_seconds_, labels, seconds(g.oncpu_ns));
    advance(runqueue_seconds_, labels, seconds(g.runq_ns));
    advance(page_faults_, labels, static_cast<double>(g.page_faults));
    advance(copy_on_write_bytes_, labels, static_cast<double>(g.copy_on_write_bytes));
    const std::pair<const char*, uint64_t> reasons[] = {
        {"preempted", g.offcpu_preempted_ns}, {"blocked", g.offcpu_blocked_ns}, {"io", g.offcpu_io_ns}};
    for (const auto& [reason, ns] : reasons) {
      Labels with_reason = labels;
      with_reason["reason"] = reason;
      advance(offcpu_seconds_, with_reason, seconds(ns));
    }
  }
}

void LiveMetrics::publish_calls(const std::vector<tracer::LiveCalls>& calls) {
  static const std::vector<double> bounds = call_latency_bounds();
  for (const tracer::LiveCalls& c : calls) {
    // A function's count is tracked as one series whichever way it was counted: one that turns
    // hot and is duty-cycled from then on continues in its estimated="true" series.
    double& last = last_[series_key(cuda_calls_.GetName(), {{"function", c.function}})];
    const double total = static_cast<double>(c.calls);
    prometheus::Counter& counter =
        cuda_calls_.Add({{"function", c.function}, {"estimated", c.estimated ? "true" : "false"}});
    if (total > last) counter.Increment(total - last);
    last = std::max(last, total);
    advance(cuda_errors_, {{"function", c.function}}, static_cast<double>(c.errors));
    if (c.latency_slots.empty()) continue;
    std::vector<double> counts(bounds.size() + 1, 0);
    for (size_t slot = 0; slot < c.latency_slots.size(); ++slot) {
      // Slot s holds [2^s, 2^(s+1)) ns: the first bound 2^b with b >= s + 1 holds it whole.
      const int b = std::max<int>(kFirstBoundSlot, static_cast<int>(slot) + 1);
      const int bucket = b > kLastBoundSlot ? static_cast<int>(bounds.size())
                                            : (b - kFirstBoundSlot + kBoundStep - 1) / kBoundStep;
      counts[bucket] += static_cast<double>(c.latency_slots[slot]);
    }
    advance(cuda_call_seconds_, {{"function", c.function}}, bounds, counts, seconds(c.timed_ns));
  }
}

void LiveMetrics::set_present(prometheus::Family<prometheus::Gauge>& family,
                              const std::vector<std::pair<Labels, double>>& values) {
  std::set<prometheus::Gauge*>& before = present_[&family];
  std::set<prometheus::Gauge*> now;
  for (const auto& [labels, value] : values) {
    prometheus::Gauge& g = family.Add(labels);
    g.Set(value);
    now.insert(&g);
  }
  for (prometheus::Gauge* g : before)
    if (!now.count(g)) family.Remove(g);
  before.swap(now);
}

void LiveMetrics::publish_health(const tracer::LiveTotals& totals) {
  std::vector<std::pair<Labels, double>> rss, dirty, fds, limits, processes, stalled;
  for (const tracer::LiveHealth& h : totals.health) {
    const Labels labels = role_rank(h.role, h.rank);
    processes.emplace_back(labels, static_cast<double>(h.processes));
    if (h.rss_bytes) rss.emplace_back(labels, static_cast<double>(*h.rss_bytes));
    if (h.private_dirty_bytes) dirty.emplace_back(labels, static_cast<double>(*h.private_dirty_bytes));
    if (h.open_fds) fds.emplace_back(labels, static_cast<double>(*h.open_fds));
    if (h.fd_limit) limits.emplace_back(labels, static_cast<double>(*h.fd_limit));
  }
  set_present(resident_bytes_, rss);
  set_present(private_dirty_bytes_, dirty);
  set_present(open_fds_, fds);
  set_present(fd_limit_, limits);
  set_present(processes_, processes);
  std::vector<std::pair<Labels, double>> shm_size, shm_free;
  if (totals.shm) {
    shm_size.emplace_back(Labels{}, static_cast<double>(totals.shm->size_bytes));
    shm_free.emplace_back(Labels{}, static_cast<double>(totals.shm->free_bytes));
  }
  set_present(shm_size_, shm_size);
  set_present(shm_free_, shm_free);
  for (const auto& [rank, seconds] : totals.stalled_seconds)
    stalled.emplace_back(rank < 0 ? Labels{} : Labels{{"rank", std::to_string(rank)}}, seconds);
  set_present(stalled_, stalled);
  for (const auto& [role, kills] : totals.oom_kills)
    advance(oom_kills_, {{"role", role}}, static_cast<double>(kills));
}

void LiveMetrics::publish(const tracer::LiveTotals& totals) {
  std::lock_guard lock(mutex_);
  if (totals.run_id != run_id_) {
    run_id_ = totals.run_id;
    last_.clear();
    last_buckets_.clear();
  }
  publish_loaders(totals.loaders);
  publish_threads(totals.threads);
  publish_calls(totals.calls);
  for (const tracer::LiveGpu& gpu : totals.gpus)
    gpu_busy_.Add({{"gpu", std::to_string(gpu.index)}, {"UUID", gpu.uuid}}).Set(gpu.busy_ratio);
  for (const tracer::LiveLoss& loss : totals.losses)
    advance(events_lost_, {{"buffer", loss.source}}, static_cast<double>(loss.dropped));
  if (totals.tracing_cost_ratio) tracing_cost_.Add({}).Set(*totals.tracing_cost_ratio);
  publish_health(totals);
}

}  // namespace ingero::metrics

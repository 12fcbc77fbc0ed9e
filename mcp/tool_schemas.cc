// SPDX-License-Identifier: Apache-2.0
#include "mcp/tool_schemas.h"

#include "reports/report_json.h"

namespace ingero::mcp::schemas {
namespace {

json latency_stats(const std::string& description) {
  return object({{"count", integer("timed calls or events")},
                 {"p50_ns", integer()},
                 {"p90_ns", integer()},
                 {"p99_ns", integer()},
                 {"max_ns", integer()},
                 {"total_ns", integer()}},
                description);
}

json bucket_bounds(const std::string& description) {
  return nullable(object({{"lower_us", number()}, {"upper_us", number()}},
                         description + " (log2 histogram bucket holding it, µs; null when nothing was recorded)"));
}

json interval() {
  return nullable(object({{"low", number()}, {"high", number()}, {"confidence", number()}, {"method", string()}},
                         "confidence interval; null when too few samples"));
}

json compare_row() {
  return object({{"name", string()},
                 {"unit", string("s | ns | count | bytes | share | GB/s | samples/s | µs")},
                 {"a", nullable(number())},
                 {"b", nullable(number())},
                 {"ratio_b_over_a", nullable(number())}});
}

json config_result() {
  return object({{"label", string("the sweep point, or the run label")},
                 {"state", string("measured | pruned | failed | skipped | pending")},
                 {"reason", string()},
                 {"run_ids", array_of(integer())},
                 {"config", any("the workload configuration as stored")},
                 {"mode", string()},
                 {"num_workers", integer()},
                 {"prefetch_factor", integer()},
                 {"pin_memory", boolean()},
                 {"persistent_workers", boolean()},
                 {"shuffle", boolean()},
                 {"cpus", integer("0: not pinned")},
                 {"epoch_seconds", array_of(number())},
                 {"median_s", nullable(number("median epoch time; null when not measured"))},
                 {"interval", interval()},
                 {"cores", nullable(integer())},
                 {"wait_fraction", nullable(number())},
                 {"runq_p99_bucket_us", bucket_bounds("run-queue latency p99")},
                 {"flags", array_of(string(), "oversubscribed, high run-queue latency, no shuffle")}});
}

json recommend_entry(const std::string& description) {
  return object({{"run_id", nullable(integer())},
                 {"label", string()},
                 {"config", any("the workload configuration as stored")},
                 {"median_s", number()},
                 {"interval", interval()}},
                description);
}

}  // namespace

json run_header() { return reports::run_header_schema(); }

json metrics() {
  return object(
      {{"window_s", number()},
       {"epoch_median_s", nullable(number())},
       {"epoch_min_s", nullable(number())},
       {"epoch_max_s", nullable(number())},
       {"epoch_seconds", array_of(number(), "measured epochs")},
       {"samples_per_s", nullable(number())},
       {"h2d_bytes_per_epoch", nullable(number())},
       {"h2d_gbps", nullable(number())},
       {"wait_fraction", nullable(number("share of the time the main loop waited for a batch"))},
       {"wait_fraction_source", string("result record | batch_wait events | observer | wake-ups | empty")},
       {"startup_batches", integer("observer: epochs' first batches, counted apart from wait_fraction")},
       {"startup_wait_ns", integer("their waits (the workers starting)")},
       {"wait_fraction_with_startup", nullable(number("wait_fraction with those batches"))},
       {"gpu_over_loop", boolean("gpu_util covers the training loop rather than the whole window")},
       {"wakeups", nullable(object({{"by_workers_ns", integer()},
                                    {"by_pin_ns", integer()},
                                    {"pin_short_ns", integer("of by_pin_ns, waits under the GIL switch interval")},
                                    {"by_others_ns", integer()},
                                    {"main_threads", integer()},
                                    {"denominator_ns", integer()},
                                    {"share_without_short_pin", number()}}))},
       {"main_host_share", nullable(number("main threads on CPU outside CUDA calls / their time"))},
       {"gpu_util", nullable(number("NVML: share of time a kernel ran"))},
       {"sm_active", nullable(number("NVML GPM: SM activity"))},
       {"gpus_sampled", integer()},
       {"verdict", string("HIGHLY input-bound | MODERATELY input-bound | NOT input-bound | HOST-bound (...) | "
                          "GPU-bound (...) | unknown (...)")},
       {"verdict_thresholds", object({{"highly", number()}, {"moderately", number()}})},
       {"batch_wait", latency_stats("main loop waiting for the next batch")},
       {"batch_compute", latency_stats("main loop moving a batch to the device and running the model")},
       {"cores", nullable(integer())},
       {"cpu_busy_share", nullable(number())},
       {"events_in_window", integer()},
       {"events_lost", nullable(integer("null: never recorded (the run's harness died)"))},
       {"io", object({{"requests", integer()},
                      {"bytes", integer()},
                      {"total_ns", integer()},
                      {"p99_bucket_us", bucket_bounds("block I/O latency p99")},
                      {"iowait_ns", integer("the traced threads' sleeps in I/O wait")},
                      {"cache_pages_added", integer("pages their reads brought into the page cache")},
                      {"read_mb_s", nullable(number("block I/O bytes over the run, MB/s"))},
                      {"device_read_mb_s",
                       nullable(number("the dataset device's measured sequential read rate, MB/s"))},
                      {"device", nullable(string("that device's name"))}})}},
      "timings, the input-bound verdict and totals");
}

json tracing_cost() { return reports::tracing_cost_schema(); }

json call_row() { return reports::call_row_schema(); }

json process_row() {
  Properties properties{{"role", string("main | worker | pin | other")},
                        {"name", string()},
                        {"pid", integer("0 in role totals")},
                        {"rank", nullable(integer())},
                        {"processes", integer()},
                        {"threads", integer()}};
  for (const char* counter : {"voluntary_switches", "involuntary_switches", "oncpu_ns", "offcpu_ns", "offcpu_max_ns",
                              "runq_count", "runq_ns", "page_allocs", "page_alloc_bytes", "page_faults",
                              "io_requests", "io_bytes", "io_ns", "iowait_count", "iowait_ns",
                              "cache_pages_added"}) {
    properties.emplace_back(counter, integer());
  }
  properties.emplace_back("runq_p50_bucket_us", bucket_bounds("run-queue latency p50"));
  properties.emplace_back("runq_p99_bucket_us", bucket_bounds("run-queue latency p99"));
  properties.emplace_back("offcpu_p99_bucket_us", bucket_bounds("off-CPU interval p99"));
  properties.emplace_back("lifetime_ns", nullable(integer()));
  return object(properties, "one process or role: exact scheduler, memory and I/O counters");
}

json causal_chain() { return reports::causal_chain_schema(); }

json slow_interval_summary() { return reports::slow_interval_schema(); }

json chain_thresholds() { return reports::chain_thresholds_schema(); }

json compare_report() {
  return object(
      {{"a", run_header()},
       {"b", run_header()},
       {"timings", array_of(compare_row())},
       {"signatures", array_of(compare_row())},
       {"basis", string("per measured epoch | whole run")},
       {"total_a_s", number()},
       {"total_b_s", number()},
       {"components", array_of(object({{"name", string()},
                                       {"part_of_wait", boolean()},
                                       {"a_s", number()},
                                       {"b_s", number()},
                                       {"delta_s", number()},
                                       {"share_of_delta", number()}}),
                               "the time difference decomposed: waiting (by cause), compute, other")},
       {"explanation", array_of(string())}});
}

json recommend_report() {
  return object(
      {{"sweep_id", nullable(integer())},
       {"headline", string()},
       {"baseline", recommend_entry("the configuration compared against")},
       {"recommended", recommend_entry("the configuration to use")},
       {"speedup", number()},
       {"speedup_low", number()},
       {"speedup_high", number()},
       {"speedup_basis", string()},
       {"verified", boolean("true: proven by interleaved re-runs (verified_by)")},
       {"verified_by", array_of(integer())},
       {"evidence", array_of(string(), "the baseline's causal chains")},
       {"skipped", array_of(object({{"label", string()}, {"state", string()}, {"reason", string()}}))},
       {"not_a_loader_setting", boolean()},
       {"job", boolean("a sweep of the user's own command: samples are seconds per step")},
       {"alternative_measured", boolean("false: only the baseline was measured, so nothing is recommended")},
       {"reasons", array_of(string())},
       {"noise_rule", string()},
       {"high_runq_p99_us", number()},
       {"configs", array_of(config_result(), "measured ones fastest first, then the others")}});
}

}  // namespace ingero::mcp::schemas

// SPDX-License-Identifier: Apache-2.0
#include "reports/render/report_json.h"

#include <fmt/format.h>

#include "common/trace_contract.h"
#include "reports/render/json_shape.h"
#include "reports/render/json_values.h"
#include "reports/text/profile_text.h"
#include "reports/text/rank_text.h"
#include "reports/text/recommend_text.h"
#include "reports/text/run_text.h"
#include "reports/text/tracing_cost_text.h"

namespace ingero::reports {
namespace {

using nlohmann::json;

const JsonShape<RunHeader>& run_header_shape() {
  using namespace json_schema;
  static const JsonShape<RunHeader> shape(
      "the run analysed",
      {{"run_id", integer(), member(&RunHeader::run_id)},
       {"label", string(), member(&RunHeader::label)},
       {"kind", string_enum_of(contract::kind::kAll), member(&RunHeader::kind)},
       {"status", string_enum_of(contract::status::kAll), member(&RunHeader::status)},
       {"mode", string("workload mode (loader, direct, ...); empty for traced commands"),
        member(&RunHeader::mode)},
       {"machine", string(), [](const RunHeader& h) { return json(machine_text(h.machine)); }},
       {"since_s", nullable(number()), optional_member(&RunHeader::since_s)},
       {"window_s", number("analysed wall time, s"), member(&RunHeader::window_s)}});
  return shape;
}

}  // namespace

json to_json(const RunHeader& h) { return run_header_shape().write(h); }
json run_header_schema() { return run_header_shape().schema(); }

namespace {

const JsonShape<WakeupWaits>& wakeups_shape() {
  using namespace json_schema;
  using W = WakeupWaits;
  static const JsonShape<W> shape(
      "", {{"by_workers_ns", integer(), member(&W::by_workers_ns)},
           {"by_pin_ns", integer(), member(&W::by_pin_ns)},
           {"pin_short_ns", integer("of by_pin_ns, waits under the GIL switch interval"), member(&W::pin_short_ns)},
           {"by_others_ns", integer(), member(&W::by_others_ns)},
           {"main_threads", integer(), member(&W::main_threads)},
           {"denominator_ns", integer(), member(&W::denominator_ns)},
           {"receive_ns", integer("estimated: next()'s time around the batches' arrival beyond the blocked intervals"),
            member(&W::receive_ns)},
           {"receive_runq_ns", integer("of receive_ns, off the CPU (runnable, or blocked on another thread)"),
            member(&W::receive_runq_ns)},
           {"receive_cpu_ns", nullable(integer("estimated: median CPU from a producer's wake-up to the next hand-off")),
            optional_member(&W::receive_cpu_ns)},
           {"handoffs", integer("the main threads' wake-ups of another thread of their process"), member(&W::handoffs)},
           {"blocked_share", number("the share without the receive estimate"),
            [](const W& w) { return json(w.blocked_share()); }},
           {"share_without_short_pin", number(), [](const W& w) { return json(w.share_without_short_pin()); }}});
  return shape;
}

const JsonShape<EpochStartup>& startup_shape() {
  using namespace json_schema;
  using S = EpochStartup;
  static const JsonShape<S> shape(
      "", {{"waited_for", string("worker_startup (fork to ready) | iterator_setup (no workers: sampler, dataset)"),
            [](const S& s) {
              return json(s.waited_for == StartupWait::worker_startup ? "worker_startup" : "iterator_setup");
            }},
           {"epochs", integer(), member(&S::epochs)},
           {"wait_ns", integer("the epochs' first batches' waits, in all"), member(&S::wait_ns)},
           {"workers_started", integer("workers measured from fork to ready"), member(&S::workers_started)},
           {"worker_ready_ns", nullable(integer("their mean fork-to-ready time")), optional_member(&S::worker_ready_ns)},
           {"batches_per_epoch", nullable(integer("len(loader), as the observer saw it")),
            optional_member(&S::batches_per_epoch)},
           {"steady_step_ns", nullable(integer("a batch's mean wait + compute, start-up waits left out")),
            optional_member(&S::steady_step_ns)},
           {"share_of_epoch", nullable(number("estimated: one epoch's first-batch wait over that epoch")),
            optional_member(&S::share_of_epoch)}});
  return shape;
}

const JsonShape<IoSummary>& io_shape() {
  using namespace json_schema;
  using I = IoSummary;
  static const JsonShape<I> shape(
      "", {{"requests", integer(), member(&I::requests)},
           {"bytes", integer(), member(&I::bytes)},
           {"total_ns", integer(), member(&I::total_ns)},
           {"p99_bucket_us", bucket_schema("block I/O latency p99"), [](const I& io) { return bucket_json(io.p99_us); }},
           {"iowait_ns", integer("the traced threads' sleeps in I/O wait"), member(&I::iowait_ns)},
           {"cache_pages_added", integer("pages their reads brought into the page cache"), member(&I::cache_pages_added)},
           {"read_mb_s", nullable(number("block I/O bytes over the run, MB/s")), optional_member(&I::read_mb_s)},
           {"device_read_mb_s", nullable(number("the dataset device's measured sequential read rate, MB/s")),
            optional_member(&I::device_read_mb_s)},
           {"device", nullable(string("that device's name")),
            [](const I& io) { return io.device_name.empty() ? json() : json(io.device_name); }}});
  return shape;
}

// The wait shares the input-bound verdict is judged by.
struct VerdictThresholds {
  double highly = kHighlyInputBoundShare;
  double moderately = kModeratelyInputBoundShare;
};

const JsonShape<VerdictThresholds>& verdict_thresholds_shape() {
  using namespace json_schema;
  using V = VerdictThresholds;
  static const JsonShape<V> shape(
      "", {{"highly", number(), member(&V::highly)}, {"moderately", number(), member(&V::moderately)}});
  return shape;
}

const JsonShape<RunMetrics>& metrics_shape() {
  using namespace json_schema;
  using M = RunMetrics;
  static const JsonShape<M> shape(
      "timings, the input-bound verdict and totals",
      {{"window_s", number(), member(&M::window_s)},
       {"epoch_median_s", nullable(number()), optional_member(&M::epoch_median_s)},
       {"epoch_min_s", nullable(number()), optional_member(&M::epoch_min_s)},
       {"epoch_max_s", nullable(number()), optional_member(&M::epoch_max_s)},
       {"epoch_seconds", array_of(number(), "measured epochs"), member(&M::epoch_seconds)},
       {"samples_per_s", nullable(number()), optional_member(&M::samples_per_s)},
       {"h2d_bytes_per_epoch", nullable(number()), optional_member(&M::h2d_bytes_per_epoch)},
       {"h2d_gbps", nullable(number()), optional_member(&M::h2d_gbps)},
       {"wait_fraction", nullable(number("share of the time the main loop waited for a batch")),
        optional_member(&M::wait_fraction)},
       {"wait_fraction_source", string("result record | batch_wait events | observer | wake-ups | empty"),
        member(&M::wait_fraction_source)},
       {"startup_batches", integer("observer: epochs' first batches, counted apart from wait_fraction"),
        member(&M::startup_batches)},
       {"startup_wait_ns", integer("their waits (what for: startup)"), member(&M::startup_wait_ns)},
       {"wait_fraction_with_startup", nullable(number("wait_fraction with those batches")),
        optional_member(&M::wait_fraction_with_startup)},
       {"startup", nullable(startup_shape().schema()),
        [](const M& m) { return m.startup ? startup_shape().write(*m.startup) : json(); }},
       {"gpu_over_loop", boolean("gpu_util covers the training loop rather than the whole window"),
        member(&M::gpu_over_loop)},
       {"wakeups", nullable(wakeups_shape().schema()),
        [](const M& m) { return m.wakeups ? wakeups_shape().write(*m.wakeups) : json(); }},
       {"main_host_share", nullable(number("main threads on CPU outside CUDA calls / their time")),
        optional_member(&M::main_host_share)},
       {"gpu_util", nullable(number("NVML: share of time a kernel ran")), optional_member(&M::gpu_util)},
       {"sm_active", nullable(number("NVML GPM: SM activity")), optional_member(&M::sm_active)},
       {"gpus_sampled", integer(), member(&M::gpus_sampled)},
       {"verdict",
        string("HIGHLY input-bound | MODERATELY input-bound | NOT input-bound | HOST-bound (...) | GPU-bound (...) | "
               "unknown (...) | none (the run failed) | none (the run ended before it measured anything) | "
               "compute-bound on the CPU (...)"),
        [](const M& m) { return json(input_bound_name(m.verdict)); }},
       {"verdict_thresholds", verdict_thresholds_shape().schema(),
        [](const M&) { return verdict_thresholds_shape().write({}); }},
       {"batch_wait", latency_schema("main loop waiting for the next batch"),
        [](const M& m) { return latency_json(m.batch_wait); }},
       {"batch_compute", latency_schema("main loop moving a batch to the device and running the model"),
        [](const M& m) { return latency_json(m.batch_compute); }},
       {"cores", nullable(integer()), optional_member(&M::cores)},
       {"cpu_busy_share", nullable(number()), optional_member(&M::cpu_busy_share)},
       {"events_in_window", integer(), member(&M::events_in_window)},
       {"events_lost", nullable(integer("null: never recorded (the run's harness died)")),
        optional_member(&M::events_lost)},
       {"io", io_shape().schema(), [](const M& m) { return io_shape().write(m.io); }}});
  return shape;
}

// One of a process row's exact counters, under its JSON name.
JsonField<ProcessRow> counter(const char* name, int64_t ThreadCounters::*field) {
  return {name, json_schema::integer(), [field](const ProcessRow& r) { return json(r.counters.*field); }};
}

const JsonShape<ProcessRow>& process_row_shape() {
  using namespace json_schema;
  using R = ProcessRow;
  using C = ThreadCounters;
  static const JsonShape<R> shape(
      "one process or role: exact scheduler, memory and I/O counters",
      {{"role", string_enum_of(contract::kRoles), member(&R::role)},
       {"name", string(), member(&R::name)},
       {"pid", integer("0 in role totals"), member(&R::pid)},
       {"rank", nullable(integer()), optional_member(&R::rank)},
       {"processes", integer(), member(&R::processes)},
       {"threads", integer(), member(&R::threads)},
       counter("voluntary_switches", &C::voluntary_switches),
       counter("involuntary_switches", &C::involuntary_switches),
       counter("oncpu_ns", &C::oncpu_ns),
       counter("offcpu_ns", &C::offcpu_ns),
       counter("offcpu_max_ns", &C::offcpu_max_ns),
       counter("runq_count", &C::runq_count),
       counter("runq_ns", &C::runq_ns),
       counter("page_allocs", &C::page_allocs),
       counter("page_alloc_bytes", &C::page_alloc_bytes),
       counter("page_faults", &C::page_faults),
       counter("io_requests", &C::io_count),
       counter("io_bytes", &C::io_bytes),
       counter("io_ns", &C::io_ns),
       counter("iowait_count", &C::iowait_count),
       counter("iowait_ns", &C::iowait_ns),
       counter("cache_pages_added", &C::cache_pages_added),
       {"runq_p50_bucket_us", bucket_schema("run-queue latency p50"), [](const R& r) { return bucket_json(r.runq_p50); }},
       {"runq_p99_bucket_us", bucket_schema("run-queue latency p99"), [](const R& r) { return bucket_json(r.runq_p99); }},
       {"offcpu_p99_bucket_us", bucket_schema("off-CPU interval p99"),
        [](const R& r) { return bucket_json(r.offcpu_p99); }},
       {"lifetime_ns", nullable(integer()), optional_member(&R::lifetime_ns)}});
  return shape;
}

}  // namespace

json to_json(const RunMetrics& m) { return metrics_shape().write(m); }
json metrics_schema() { return metrics_shape().schema(); }
json to_json(const ProcessRow& row) { return process_row_shape().write(row); }
json process_row_schema() { return process_row_shape().schema(); }

namespace {

// One op's slow intervals with the analysis whose producers name their causes.
struct VictimInAnalysis {
  const VictimSummary& victim;
  const ChainAnalysis& analysis;
};

const JsonShape<VictimInAnalysis>& slow_interval_shape() {
  using namespace json_schema;
  using V = VictimInAnalysis;
  static const JsonShape<V> shape(
      "", {{"op", string(), [](const V& v) { return json(v.victim.op); }},
           {"selection", string("which intervals were taken, in words"),
            [](const V& v) { return json(selection_text(v.victim, v.analysis.thresholds)); }},
           {"count", integer(), [](const V& v) { return json(v.victim.count); }},
           {"total_ns", integer(), [](const V& v) { return json(v.victim.total_ns); }},
           {"causes",
            array_of(object({{"cause", string()}, {"label", string()}, {"ns", integer()}, {"share", number()}})),
            [](const V& v) {
              json causes = json::array();
              for (const auto& c : v.victim.causes)
                causes.push_back({{"cause", c.cause.code()}, {"label", cause_share_label(c, v.victim.op, v.analysis)},
                                  {"ns", c.ns}, {"share", c.share}});
              return causes;
            }}});
  return shape;
}

json to_json(const VictimSummary& v, const ChainAnalysis& analysis) { return slow_interval_shape().write({v, analysis}); }

}  // namespace

namespace {

const JsonShape<CallLatencyRow>& call_row_shape() {
  using namespace json_schema;
  using R = CallLatencyRow;
  static const JsonShape<R> shape(
      "one probed CUDA runtime / driver or NCCL function",
      {{"function", string(), member(&CallLatencyRow::function)},
       {"category", string_enum_of(contract::category::kLibraryCalls), member(&CallLatencyRow::category)},
       {"count", integer("timed calls or events"), [](const R& r) { return json(r.stats.count); }},
       {"p50_ns", integer(), [](const R& r) { return json(r.stats.p50_ns); }},
       {"p90_ns", integer(), [](const R& r) { return json(r.stats.p90_ns); }},
       {"p99_ns", integer(), [](const R& r) { return json(r.stats.p99_ns); }},
       {"max_ns", integer(), [](const R& r) { return json(r.stats.max_ns); }},
       {"total_ns", integer(), [](const R& r) { return json(r.stats.total_ns); }},
       {"calls", integer("calls over the whole run: exact, or the estimate when `estimated`"),
        [](const R& r) { return json(r.count()); }},
       {"estimated", boolean("the function was duty-cycled: calls is estimated from the probed windows"),
        [](const R& r) { return json(r.estimate.has_value()); }},
       {"probed_calls", integer("calls the probes trapped (all of them when not estimated)"),
        member(&CallLatencyRow::calls)},
       {"calls_lower_bound",
        boolean("only a lower bound of the calls is known (calls = calls_low, calls_high null): too few windows, "
                "or the probes' traps took most of them"),
        [](const R& r) { return r.estimate && r.estimate->lower_bound_only(); }},
       {"calls_low", integer("95 % interval of calls (= calls when exact)"),
        [](const R& r) { return r.estimate ? json(r.estimate->low) : json(r.calls); }},
       {"calls_high", nullable(integer("null: no upper bound")),
        [](const R& r) {
          return r.estimate ? (r.estimate->high ? json(*r.estimate->high) : json(nullptr)) : json(r.calls);
        }},
       {"duty_share", nullable(number("share of the sampled processes' time the probes were attached")),
        [](const R& r) { return r.estimate ? json(r.estimate->duty_share) : json(nullptr); }},
       {"cut_calls",
        nullable(integer("probed calls not timed: their entry and return were not both seen in one probing "
                         "window; counted in calls, left out of the latencies. null: a trace before schema 9")),
        [](const R& r) { return r.cut ? json(*r.cut) : json(nullptr); }},
       {"errors", integer(), member(&CallLatencyRow::errors)},
       {"bytes", integer(), member(&CallLatencyRow::bytes)},
       {"percentiles",
        string_enum({"exact", "log2_bucket_upper_bound"},
                    "exact: over every stored call; else upper bounds of log2 latency buckets"),
        [](const R& r) { return json(r.exact ? "exact" : "log2_bucket_upper_bound"); }},
       {"covers", string_enum({"whole_run", "window"}),
        [](const R& r) { return json(r.whole_run ? "whole_run" : "window"); }}});
  return shape;
}

}  // namespace

json to_json(const CallLatencyRow& row) { return call_row_shape().write(row); }
json call_row_schema() { return call_row_shape().schema(); }

namespace {

const JsonShape<ChangeCheck>& change_check_shape() {
  using namespace json_schema;
  // The fields of a measured change, and of an unmeasured one.
  const auto measured_only = [](auto read) {
    return [read](const ChangeCheck& c) { return c.run_id ? json(read(c)) : absent(); };
  };
  static const JsonShape<ChangeCheck> shape(
      "a configuration change the chain suggests, checked against the DB's runs",
      {{"knob", string("mode | num_workers | prefetch_factor | pin_memory | persistent_workers | sampling | storage | "
                       "page_cache"),
        [](const ChangeCheck& c) { return json(c.change.knob); }},
       {"value", string(), [](const ChangeCheck& c) { return json(c.change.value); }},
       {"measured", boolean("true: a run of this DB differs by this change alone (run_id, medians); false: unmeasured, "
                            "`command` measures it"),
        [](const ChangeCheck& c) { return json(c.run_id.has_value()); }},
       {"run_id", integer("the run that measured the change"), measured_only([](const ChangeCheck& c) { return *c.run_id; }),
        true},
       {"label", string(), measured_only([](const ChangeCheck& c) { return c.label; }), true},
       {"this_median_s", nullable(number("the analysed run's epoch median")),
        measured_only([](const ChangeCheck& c) { return optional_json(c.this_median_s); }), true},
       {"other_median_s", nullable(number("the changed configuration's epoch median")),
        measured_only([](const ChangeCheck& c) { return optional_json(c.other_median_s); }), true},
       {"command", string("the command that measures both side by side"),
        [](const ChangeCheck& c) { return c.run_id ? absent() : json(c.command); }, true}});
  return shape;
}

json to_json(const ChangeCheck& c) { return change_check_shape().write(c); }

std::string share_rule(double share) {
  return fmt::format("overlapped time ≥ {:g} % of the analysed wall time", share * 100.0);
}

}  // namespace

namespace {

const JsonShape<ChainThresholds>& thresholds_shape() {
  using namespace json_schema;
  static const JsonShape<ChainThresholds> shape(
      "the stated thresholds of the chain analysis",
      {{"slow_call", string("the rule for a slow call, in words"),
        [](const ChainThresholds&) { return json("duration ≥ max(p99, slow_vs_p50 × p50, slow_min_ns)"); }},
       {"slow_vs_p50", number(), member(&ChainThresholds::slow_vs_p50)},
       {"slow_min_ns", integer(), member(&ChainThresholds::slow_min_ns)},
       {"explains_share", number(), member(&ChainThresholds::explains_share)},
       {"min_chain_share", number(), member(&ChainThresholds::min_chain_share)},
       {"severity", object({{"HIGH", string()}, {"MEDIUM", string()}, {"LOW", string()}}, "each severity's rule, in words"),
        [](const ChainThresholds& t) {
          return json{{severity_name(Severity::high), share_rule(t.high_share_of_window)},
                      {severity_name(Severity::medium), share_rule(t.medium_share_of_window)},
                      {severity_name(Severity::low), "below MEDIUM"}};
        }},
       {"high_share_of_window", number(), member(&ChainThresholds::high_share_of_window)},
       {"medium_share_of_window", number(), member(&ChainThresholds::medium_share_of_window)}});
  return shape;
}

}  // namespace

json to_json(const ChainThresholds& t) { return thresholds_shape().write(t); }

namespace {

const JsonShape<ChainEvidence>& evidence_shape() {
  using namespace json_schema;
  static const JsonShape<ChainEvidence> shape(
      "", {{"threads", integer(), member(&ChainEvidence::threads)},
           {"context_switches", integer(), member(&ChainEvidence::context_switches)},
           {"offcpu_overlap_ns", integer(), member(&ChainEvidence::offcpu_overlap_ns)},
           {"page_faults", integer(), member(&ChainEvidence::page_faults)},
           {"forks", integer(), member(&ChainEvidence::forks)},
           {"io_wait_ns", integer("on those threads, in the slow intervals: slept in I/O wait"),
            member(&ChainEvidence::io_wait_ns)},
           {"read_bytes", integer("block I/O completed for them in those intervals"),
            member(&ChainEvidence::read_bytes)}});
  return shape;
}

}  // namespace

json to_json(const ChainEvidence& e) { return evidence_shape().write(e); }

namespace {

const JsonShape<FrameShare>& frame_shape() {
  using namespace json_schema;
  using F = FrameShare;
  static const JsonShape<F> shape(
      "one function of a role's CPU profile (every line of it together)",
      {{"name", string("a Python function's qualified name, a native or kernel symbol, or an address in hex"),
        member(&F::name)},
       {"kind", string_enum({std::string(contract::frame_kind::kPython), std::string(contract::frame_kind::kNative),
                             std::string(contract::frame_kind::kKernel)}),
        member(&F::kind)},
       {"file", nullable(string("the Python source file, or the native binary")),
        [](const F& f) { return f.file.empty() ? json(nullptr) : json(f.file); }},
       {"line", nullable(integer("the line most sampled, or the function's first line (line_kind)")),
        optional_member(&F::line)},
       {"line_kind", nullable(string("executing (the line most sampled) | first (the function's first line)")),
        [](const F& f) { return f.line_kind.empty() ? json(nullptr) : json(f.line_kind); }},
       {"label", string("the function in words, as explain prints it"), [](const F& f) { return json(frame_text(f)); }},
       {"self_samples", integer("samples in the function's own code"), member(&F::self_samples)},
       {"inclusive_samples", integer("samples with the function anywhere on the stack"), member(&F::inclusive_samples)},
       {"self_share", number("self_samples / the role's samples"), member(&F::self_share)},
       {"inclusive_share", number("inclusive_samples / the role's samples"), member(&F::inclusive_share)}});
  return shape;
}

const JsonShape<CpuSplit>& split_shape() {
  using namespace json_schema;
  using S = CpuSplit;
  static const JsonShape<S> shape(
      "the main thread's samples: batch building (DataLoader, dataset, collate, transforms, image decoding), the "
      "model's compute (torch.nn, autograd, optimizers, torch ops), the rest",
      {{"loader_samples", integer(), member(&S::loader)},
       {"model_samples", integer(), member(&S::model)},
       {"other_samples", integer(), member(&S::other)},
       {"loader_share", number(), [](const S& s) { return json(s.share(CpuPart::loader)); }},
       {"model_share", number(), [](const S& s) { return json(s.share(CpuPart::model)); }},
       {"other_share", number(), [](const S& s) { return json(s.share(CpuPart::other)); }},
       {"largest", string_enum({"loader", "model", "other"}), [](const S& s) { return json(cpu_part_name(s.largest())); }}});
  return shape;
}

// One role's profile with its top functions both ways.
struct RoleView {
  const RoleProfile& role;
  size_t top;
};

const JsonShape<RoleView>& role_profile_shape() {
  using namespace json_schema;
  using R = RoleView;
  static const JsonShape<R> shape(
      "the on-CPU samples of one role (and rank)",
      {{"role", string_enum({"main", "worker", "pin", "other"}), [](const R& r) { return json(r.role.role); }},
       {"rank", nullable(integer("null: every rank together, or no ranks")),
        [](const R& r) { return optional_json(r.role.rank); }},
       {"threads", integer("threads sampled"), [](const R& r) { return json(r.role.threads); }},
       {"samples", integer(), [](const R& r) { return json(r.role.samples); }},
       {"split", nullable(split_shape().schema()),
        [](const R& r) { return r.role.split ? split_shape().write(*r.role.split) : json(nullptr); }},
       {"top_self", array_of(frame_shape().schema(), "the functions with the most self samples, most first"),
        [](const R& r) { return frame_shape().write_all(r.role.top_by_self(r.top)); }},
       {"top_inclusive", array_of(frame_shape().schema(), "the functions on the most stacks, most first"),
        [](const R& r) { return frame_shape().write_all(r.role.top_by_inclusive(r.top)); }}});
  return shape;
}

// The kernel's Python walks by outcome (null where unrecorded).
nlohmann::json python_walks_schema() {
  json_schema::Properties outcomes;
  for (const char* outcome : contract::kPythonWalkOutcomes) outcomes.emplace_back(outcome, json_schema::integer());
  return json_schema::object(outcomes, "the kernel's walks of Python frames over the run (CPU samples and stored "
                                       "calls' stacks) by outcome: ok; no_layout, no_thread, read_fault, not_code "
                                       "(no frames read); depth_cut (read, but frames left past the walk's bounds)");
}

const JsonShape<ProfileView>& profile_shape() {
  using namespace json_schema;
  using P = ProfileView;
  const auto views = [](const std::vector<RoleProfile>& roles, const P& p) {
    json out = json::array();
    for (const RoleProfile& r : roles)
      if (p.role.empty() || r.role == p.role) out.push_back(role_profile_shape().write({r, p.top}));
    return out;
  };
  static const JsonShape<P> shape(
      "where the CPU went: on-CPU samples of the traced threads per role and rank (empty lists when no profile was "
      "taken)",
      {{"taken", boolean("the run was profiled (profile_hz > 0)"), [](const P& p) { return json(p.taken); }},
       {"status", string("the profile in words, or that none was taken"),
        [](const P& p) { return json(profile_status_text(p.profile, p.taken)); }},
       {"hz", nullable(integer("samples per second per CPU")),
        [](const P& p) { return p.profile ? optional_json(p.profile->hz) : json(nullptr); }},
       {"python", nullable(string("'ok', or why Python frames are unavailable")),
        [](const P& p) { return p.profile && !p.profile->python.empty() ? json(p.profile->python) : json(nullptr); }},
       {"samples", integer("in the analysed window, every thread"),
        [](const P& p) { return json(p.profile ? p.profile->samples : 0); }},
       {"python_walks", nullable(python_walks_schema()),
        [](const P& p) {
          if (!p.profile || p.profile->python_walks.empty()) return json(nullptr);
          json out = json::object();
          for (const char* outcome : contract::kPythonWalkOutcomes) {
            auto n = p.profile->python_walks.find(outcome);
            out[outcome] = n == p.profile->python_walks.end() ? 0 : n->second;
          }
          return out;
        }},
       {"top", integer("functions listed per role, each way"), [](const P& p) { return json(p.top); }},
       {"roles", array_of(role_profile_shape().schema(), "main, worker, pin, other: those sampled"),
        [views](const P& p) { return p.profile ? views(p.profile->roles, p) : json::array(); }},
       {"ranks", array_of(role_profile_shape().schema(), "per role and rank, where threads carry ranks"),
        [views](const P& p) { return p.profile ? views(p.profile->ranks, p) : json::array(); }}});
  return shape;
}

const JsonShape<CallSite>& call_site_shape() {
  using namespace json_schema;
  using S = CallSite;
  static const JsonShape<S> shape(
      "where the user's code made the slow intervals: the innermost frame of its own code in the stacks they "
      "carry, the one most of them share",
      {{"kind", string_enum({"python", "native"}), member(&S::kind)},
       {"function", string("qualified name or symbol"), member(&S::function)},
       {"file", string("empty when unknown"), member(&S::file)},
       {"line", nullable(integer("the line executing")), optional_member(&S::line)},
       {"text", string("the site in words, e.g. train.py:57 in train_one_epoch"),
        [](const S& s) { return json(site_text(s)); }},
       {"intervals", integer("slow intervals made there"), member(&S::intervals)},
       {"with_stack", integer("slow intervals whose stack was stored"), member(&S::with_stack)}});
  return shape;
}

const JsonShape<WordedChain>& causal_chain_shape() {
  using namespace json_schema;
  using W = WordedChain;
  static const JsonShape<W> shape(
      "slow intervals of one op and the cause that overlapped them",
      {{"rank", integer(), [](const W& w) { return json(w.chain.rank); }},
       {"severity", string_enum({"HIGH", "MEDIUM", "LOW"}),
        [](const W& w) { return json(severity_name(w.chain.severity)); }},
       {"victim", string("the slow op: a CUDA function, batch_wait, or main_on_cpu (a host-bound loop)"),
        [](const W& w) { return json(w.chain.victim); }},
       {"victim_role", string(), [](const W& w) { return json(w.chain.victim_role); }},
       {"cause", string("role.kind, e.g. worker.on_cpu, main.cpu_wait"), [](const W& w) { return json(w.chain.cause.code()); }},
       {"cause_label", string(), [](const W& w) { return json(w.words.cause_label); }},
       {"calls_explained", integer(), [](const W& w) { return json(w.chain.calls_explained); }},
       {"victim_calls", integer("slow intervals of that op"), [](const W& w) { return json(w.chain.victim_calls); }},
       {"lost_ns", integer("time the cause overlapped the slow intervals: an upper bound on the saving"),
        [](const W& w) { return json(w.chain.lost_ns); }},
       {"victim_ns", integer(), [](const W& w) { return json(w.chain.victim_ns); }},
       {"share_of_victim", number(), [](const W& w) { return json(w.chain.share_of_victim); }},
       {"share_of_window", number(), [](const W& w) { return json(w.chain.share_of_window); }},
       {"evidence", evidence_shape().schema(), [](const W& w) { return evidence_shape().write(w.chain.evidence); }},
       {"timeline", array_of(string()), [](const W& w) { return json(w.words.timeline); }},
       {"summary", string(), [](const W& w) { return json(w.words.summary); }},
       {"root_cause", string(), [](const W& w) { return json(w.words.root_cause); }},
       {"recommendation", string(), [](const W& w) { return json(w.words.recommendation); }},
       {"frames",
        array_of(frame_shape().schema(),
                 "an on-CPU cause with a CPU profile: its role's top functions by self samples over the window"),
        [](const W& w) { return frame_shape().write_all(w.chain.frames); }},
       {"profile_samples", integer("the role's samples the frames' shares are of (0: no profile)"),
        [](const W& w) { return json(w.chain.profile_samples); }},
       {"split", nullable(split_shape().schema()),
        [](const W& w) { return w.chain.split ? split_shape().write(*w.chain.split) : json(nullptr); }},
       {"site", nullable(call_site_shape().schema()),
        [](const W& w) { return w.chain.site ? call_site_shape().write(*w.chain.site) : json(nullptr); }},
       {"changes", array_of(change_check_shape().schema()),
        [](const W& w) { return change_check_shape().write_all(w.chain.checks); }}});
  return shape;
}

}  // namespace

json to_json(const CausalChain& c, const ChainWords& words) { return causal_chain_shape().write({c, words}); }

json causal_chain_schema() { return causal_chain_shape().schema(); }
json to_json(const ProfileView& view) { return profile_shape().write(view); }
json profile_schema() { return profile_shape().schema(); }
json slow_interval_schema() { return slow_interval_shape().schema(); }
json chain_thresholds_schema() { return thresholds_shape().schema(); }

namespace {

json to_json(const NcclCallRow& c) {
  return {{"function", c.op},     {"calls", c.calls},   {"estimated", c.estimated}, {"errors", c.errors},
          {"bytes", c.bytes},     {"total_ns", c.total_ns}, {"mean_ns", optional_json(c.mean_ns)},
          {"max_ns", c.max_ns}};
}

json to_json(const RankRow& row) {
  json nccl = json::array();
  for (const NcclCallRow& call : row.nccl) nccl.push_back(to_json(call));
  return {{"rank", row.rank},
          {"node", row.node},
          {"run_id", row.run_id},
          {"pid", row.pid},
          {"worker_processes", row.worker_processes},
          {"metrics", to_json(row.metrics)},
          {"oncpu_ns", row.counters.oncpu_ns},
          {"offcpu_ns", row.counters.offcpu_ns},
          {"runq_ns", row.counters.runq_ns},
          {"involuntary_switches", row.counters.involuntary_switches},
          {"waits_for_straggler_ns", row.waits_for_straggler_ns},
          {"top_chain", row.top_chain ? to_json(*row.top_chain, *rank_chain_words(row)) : json(nullptr)},
          {"nccl", nccl}};
}

// A node's cores advice; the explained run's node is also spread at the top of "ranks".
json cores_json(const NodeCores& n) {
  return {{"cores", optional_json(n.cores)},
          {"workers_per_rank", n.workers_per_rank},
          {"processes", n.processes},
          {"suggested_workers_per_rank", optional_json(n.suggested_workers)},
          {"suggestion", n.suggestion_check ? to_json(*n.suggestion_check) : json(nullptr)}};
}

json to_json(const Job& job) {
  json runs = json::array();
  for (const JobMember& m : job.members)
    runs.push_back({{"run_id", m.run_id}, {"node", m.node}, {"ranks", m.ranks},
                    {"world_size", optional_json(m.world_size)}, {"started_unix", m.start_unix},
                    {"ended_unix", m.end_unix}});
  return {{"runs", runs},
          {"world_size", optional_json(job.world_size)},
          {"overlap_start_unix", job.overlap_start_unix},
          {"overlap_end_unix", job.overlap_end_unix},
          {"missing_ranks", job.missing_ranks}};
}

}  // namespace

json to_json(const RankAnalysis& r) {
  json ranks = json::array();
  for (const RankRow& row : r.ranks) ranks.push_back(to_json(row));
  json nodes = json::array();
  for (const NodeCores& n : r.nodes) {
    json node = cores_json(n);
    node["node"] = n.node;
    node["run_id"] = n.run_id;
    node["ranks"] = n.ranks;
    nodes.push_back(std::move(node));
  }
  json out = r.nodes.empty() ? json::object() : cores_json(r.nodes.front());
  out["ranks"] = ranks;
  out["straggler"] = optional_json(r.straggler);
  out["nodes"] = nodes;
  out["job"] = r.job ? to_json(*r.job) : json(nullptr);
  return out;
}

namespace {

const JsonShape<ThreadTracingCost>& thread_cost_shape() {
  using namespace json_schema;
  using T = ThreadTracingCost;
  static const JsonShape<T> shape("", {{"tid", integer(), member(&T::tid)},
                                       {"pid", integer(), member(&T::pid)},
                                       {"role", string(), member(&T::role)},
                                       {"comm", string(), member(&T::comm)},
                                       {"hits", integer("calls probed on this thread"), member(&T::hits)},
                                       {"cost_ns", number("hits x the calibrated cost"), member(&T::cost_ns)},
                                       {"time_ns", integer("the thread's traced time"), member(&T::time_ns)},
                                       {"share", number("cost / time"), member(&T::share)}});
  return shape;
}

const JsonShape<SampledFunction>& sampled_function_shape() {
  using namespace json_schema;
  using F = SampledFunction;
  static const JsonShape<F> shape(
      "", {{"function", string(), member(&F::function)},
           {"pid", integer("0: every process"), member(&F::pid)},
           {"windows", integer(), member(&F::windows)},
           {"duty_share", number("share of the time the probes were attached"), member(&F::duty_share)},
           {"calls", integer("estimated (the lower bound when calls_high is null)"),
            [](const F& f) { return json(f.estimate.calls); }},
           {"calls_low", integer(), [](const F& f) { return json(f.estimate.low); }},
           {"calls_high", nullable(integer("null: no upper bound")),
            [](const F& f) { return f.estimate.high ? json(*f.estimate.high) : json(nullptr); }},
           {"rate_clock",
            nullable(string_enum({std::string(contract::rate_clock::kOnCpu), std::string(contract::rate_clock::kWall)},
                                 "the windows' rates per second of the callers' on-CPU time, or per wall second; "
                                 "null when the trace predates recording it")),
            [](const F& f) { return f.rate_clock.empty() ? json(nullptr) : json(f.rate_clock); }},
           {"trap_cost_scale",
            nullable(number("what the windows took a trap to cost, as a multiple of the calibrated cost, measured in "
                            "the job; null: the calibrated cost")),
            [](const F& f) { return f.trap_cost_scale ? json(*f.trap_cost_scale) : json(nullptr); }}});
  return shape;
}

const JsonShape<ProgramTime>& program_time_shape() {
  using namespace json_schema;
  using P = ProgramTime;
  static const JsonShape<P> shape("", {{"program", string(), member(&P::program)},
                                       {"runs", integer(), member(&P::runs)},
                                       {"ns", integer("time in the program, by the kernel's BPF statistics"),
                                        member(&P::ns)}});
  return shape;
}

const JsonShape<ProgramsCost>& programs_cost_shape() {
  using namespace json_schema;
  using P = ProgramsCost;
  static const JsonShape<P> shape(
      "the tracer's process, scheduler, memory and block programs, timed by the kernel",
      {{"runs", integer(), member(&P::runs)},
       {"ns", integer(), member(&P::ns)},
       {"traced_cpu_ns", integer("the traced threads' on-CPU time"), member(&P::traced_cpu_ns)},
       {"share", nullable(number("ns / traced_cpu_ns: the programs' own time; entering them costs more, and they also "
                                  "run for other processes' events")),
        [](const P& p) { return optional_json(p.share); }},
       {"programs", array_of(program_time_shape().schema(), "most time first"),
        [](const P& p) { return program_time_shape().write_all(p.programs); }},
       {"profile_program", nullable(program_time_shape().schema()),
        [](const P& p) { return p.profile ? program_time_shape().write(*p.profile) : json(nullptr); }},
       {"profile_share", nullable(number("profile_program.ns / traced_cpu_ns")),
        [](const P& p) { return optional_json(p.profile_share); }}});
  return shape;
}

const JsonShape<JobCpu>& job_cpu_shape() {
  using namespace json_schema;
  static const JsonShape<JobCpu> shape(
      "a launched job's CPU time, as the harness waited for it (its process and the descendants it waited for); "
      "traced, it includes the traps' and kernel programs' cost as system time",
      {{"user_ns", integer(), member(&JobCpu::user_ns)}, {"system_ns", integer(), member(&JobCpu::system_ns)}});
  return shape;
}

const JsonShape<HelperCpuPart>& helper_cpu_part_shape() {
  using namespace json_schema;
  using P = HelperCpuPart;
  static const JsonShape<P> shape(
      "", {{"part", string_enum({std::string(kPublishPart), std::string(kServePart)},
                                "publish: gathering the totals and publishing them each second; serve: serving "
                                "scrapes of /metrics"),
            member(&P::part)},
           {"cpu_ns", integer(), member(&P::cpu_ns)},
           {"count", nullable(integer("how many times (serve: scrapes); null: not counted")),
            optional_member(&P::count)}});
  return shape;
}

// One shape for each of the tracer's helpers beside the job.
const JsonShape<HelperCpu>& helper_cpu_shape() {
  using namespace json_schema;
  using H = HelperCpu;
  static const JsonShape<H> shape(
      "what the tracer's process spent on a helper beside the job, by the helper's own CPU clock (not part of "
      "the job's CPU time: what it adds to the run)",
      {{"name", string_enum({std::string(kHealthSamplerHelper), std::string(kLiveMetricsHelper)}), member(&H::name)},
       {"cpu_ns", integer(), member(&H::cpu_ns)},
       {"job_share", nullable(number("cpu_ns / the job's CPU time")), optional_member(&H::job_share)},
       {"parts", array_of(helper_cpu_part_shape().schema(), "what cpu_ns was spent on, where measured apart"),
        [](const H& h) { return helper_cpu_part_shape().write_all(h.parts); }}});
  return shape;
}

const JsonShape<TracingCost>& tracing_cost_shape() {
  using namespace json_schema;
  using C = TracingCost;
  static const JsonShape<C> shape(
      "what tracing cost the job: probe hits at their calibrated cost, and the kernel programs as timed",
      {{"known", boolean("the per-call probe cost was calibrated at start-up"), [](const C& c) { return json(c.known()); }},
       {"probe_entry_ns", nullable(number("a call probed at entry only")), [](const C& c) { return optional_json(c.entry_ns); }},
       {"probe_call_ns", nullable(number("a call probed at entry and return")),
        [](const C& c) { return optional_json(c.call_ns); }},
       {"unknown_because", nullable(string()),
        [](const C& c) { return c.known() ? json(nullptr) : json(c.unknown_because); }},
       {"main_thread_share", nullable(number("the main thread's time its probe hits cost")),
        [](const C& c) { return c.main && c.known() ? json(c.main->share) : json(nullptr); }},
       {"max_thread_share", nullable(number()),
        [](const C& c) { return !c.threads.empty() && c.known() ? json(c.threads.front().share) : json(nullptr); }},
       {"sampling", string_enum({"on", "off"}, "whether hot calls are duty-cycled"),
        [](const C& c) { return json(c.sampling_on ? "on" : "off"); }},
       {"hot_share", nullable(number("a call is hot past this share of its thread's time")),
        [](const C& c) { return optional_json(c.hot_share); }},
       {"threads", array_of(thread_cost_shape().schema(), "threads with probe hits, most costly share first"),
        [](const C& c) { return thread_cost_shape().write_all(c.threads); }},
       {"sampled", array_of(sampled_function_shape().schema(), "duty-cycled functions: their counts are estimates"),
        [](const C& c) { return sampled_function_shape().write_all(c.sampled); }},
       {"kernel_programs", nullable(programs_cost_shape().schema()),
        [](const C& c) { return c.programs ? programs_cost_shape().write(*c.programs) : json(nullptr); }},
       {"kernel_programs_unknown_because", nullable(string()),
        [](const C& c) { return c.programs ? json(nullptr) : json(c.programs_unknown_because); }},
       {"job_cpu", nullable(job_cpu_shape().schema()),
        [](const C& c) { return c.job_cpu ? job_cpu_shape().write(*c.job_cpu) : json(nullptr); }},
       {"health_sampler", nullable(helper_cpu_shape().schema()),
        [](const C& c) { return c.health_sampler ? helper_cpu_shape().write(*c.health_sampler) : json(nullptr); }},
       {"live_metrics", nullable(helper_cpu_shape().schema()),
        [](const C& c) { return c.live_metrics ? helper_cpu_shape().write(*c.live_metrics) : json(nullptr); }},
       {"lines", array_of(string(), "the same in words"), [](const C& c) { return json(tracing_cost_lines(c)); }}});
  return shape;
}

}  // namespace

json to_json(const TracingCost& c) { return tracing_cost_shape().write(c); }
json tracing_cost_schema() { return tracing_cost_shape().schema(); }

json to_json(const std::vector<CallLatencyRow>& rows) { return call_row_shape().write_all(rows); }

json slow_intervals_json(const ChainAnalysis& analysis) {
  json out = json::array();
  for (const auto& v : analysis.victims) out.push_back(to_json(v, analysis));
  return out;
}

json to_json(const ExplainReport& r) {
  const json calls = to_json(r.calls);
  json roles = json::array();
  for (const auto& row : r.roles) roles.push_back(to_json(row));
  json processes = json::array();
  for (const auto& row : r.processes) processes.push_back(to_json(row));
  const json victims = slow_intervals_json(r.chains);
  json chains = json::array();
  for (size_t i = 0; i < r.chains.chains.size(); ++i) chains.push_back(to_json(r.chains.chains[i], r.chain_words[i]));
  json loaders = json::array();
  for (const auto& l : r.loaders)
    loaders.push_back({{"pid", l.pid}, {"loader", l.loader}, {"knobs", l.knobs}, {"overrides", l.overrides},
                       {"epochs", l.epochs}, {"batches", l.batches}, {"wait_ns", l.wait_ns}, {"workers", l.workers}});
  return {{"schema", "ingero-bench/explain"}, {"version", 1}, {"run", to_json(r.run)},
          {"metrics", to_json(r.metrics)}, {"loaders", loaders}, {"gpu_sampler", r.gpu_sampler},
          {"tracing_cost", to_json(r.tracing_cost)},
          {"call_latency", calls}, {"roles", roles},
          {"processes", processes}, {"slow_intervals", victims}, {"causal_chains", chains},
          {"chain_thresholds", to_json(r.chains.thresholds)}, {"worker_health", to_json(r.health)},
          {"ranks", r.ranks ? to_json(*r.ranks) : json(nullptr)},
          {"profile", to_json(ProfileView{r.profile, r.profile_taken, kProfileTopJson, ""})}, {"notes", r.notes}};
}

namespace {

json to_json(const ConfigRow& row) {
  json speedup = nullptr;
  if (row.speedup) {
    speedup = {{"ratio", row.speedup->ratio}, {"interval", interval_json(row.speedup->interval)},
               {"basis", row.speedup_verified ? "interleaved re-runs" : "the search's epochs"}};
  }
  return {{"label", row.label},
          {"mode", row.mode},
          {"num_workers", row.num_workers},
          {"prefetch_factor", optional_json(row.prefetch_factor)},
          {"pin_memory", row.pin_memory},
          {"persistent_workers", row.persistent_workers},
          {"run_ids", row.run_ids},
          {"epoch_seconds", row.epoch_seconds},
          {"median_s", optional_json(row.median_s)},
          {"interval", row.interval ? interval_json(*row.interval) : json(nullptr)},
          {"samples_per_s", optional_json(row.samples_per_s)},
          {"wait_fraction", optional_json(row.wait_fraction)},
          {"state", row.state},
          {"reason", row.reason},
          {"flags", flag_texts(row.flags)},
          {"baseline", row.baseline},
          {"recommended", row.recommended},
          {"speedup", speedup},
          {"in_grid", row.in_grid}};
}

json to_json(const EpochGrid& grid) {
  json prefetch = json::array();
  for (const auto& p : grid.prefetch) prefetch.push_back(optional_json(p));
  json values = json::array();
  for (const auto& row : grid.median_s) {
    json cells = json::array();
    for (const auto& cell : row) cells.push_back(optional_json(cell));
    values.push_back(cells);
  }
  json marks = json::array();
  for (const auto& [cell, mark] : grid.marks)
    marks.push_back({{"num_workers", grid.num_workers[cell.first]}, {"prefetch_factor", prefetch[cell.second]},
                     {"mark", mark}});
  return {{"mode", grid.mode},
          {"family", grid.family},
          {"num_workers", grid.num_workers},
          {"prefetch_factor", prefetch},
          {"median_s", values},
          {"marks", marks}};
}

// The timeline's lanes with their totals per kind; the spans themselves are what the HTML page draws.
json to_json(const RunTimeline& t) {
  json lanes = json::array();
  for (const auto& lane : t.lanes) {
    json totals = json::object();
    for (const auto& [kind, total] : lane.totals) totals[kind] = {{"spans", total.spans}, {"ns", total.ns}};
    lanes.push_back({{"role", lane.role}, {"pid", lane.pid}, {"tid", lane.tid}, {"comm", lane.comm},
                     {"spans", static_cast<int64_t>(lane.spans.size())}, {"totals", totals}});
  }
  return {{"run_id", t.run_id}, {"label", t.run_label}, {"why", t.why}, {"start_ns", t.start_ns},
          {"end_ns", t.end_ns}, {"lanes", lanes}, {"lanes_left_out", t.lanes_left_out}};
}

}  // namespace

json to_json(const ReportDoc& r) {
  json runs = json::array();
  for (const auto& run : r.runs)
    runs.push_back({{"run_id", run.run_id}, {"label", run.label}, {"status", run.status},
                    {"sweep_phase", run.sweep_phase}});
  json configs = json::array();
  for (const auto& row : r.configs) configs.push_back(to_json(row));
  json grids = json::array();
  for (const auto& grid : r.grids) grids.push_back(to_json(grid));
  json processes = json::array();
  for (const auto& panel : r.processes) {
    json rows = json::array();
    for (const auto& row : panel.rows) rows.push_back(to_json(row));
    processes.push_back({{"run_id", panel.run_id}, {"label", panel.run_label}, {"rows", rows}});
  }
  json roles = json::array();
  for (const auto& role : r.roles) {
    json row = to_json(role.totals);
    row["run_id"] = role.run_id;
    row["run_label"] = role.run_label;
    roles.push_back(row);
  }
  json sweep = nullptr;
  if (r.sweep)
    sweep = {{"sweep_id", r.sweep->sweep_id}, {"status", r.sweep->status},
             {"baseline_point", r.sweep->baseline_point}, {"recommended_point", r.sweep->recommended_point}};
  return {{"schema", "ingero-bench/report"},
          {"version", 1},
          {"db", r.db_path},
          {"scope", r.scope},
          {"sweep", sweep},
          {"runs", runs},
          {"machine", r.machine},
          {"data", r.workload},
          {"recommendation", r.recommendation ? to_json(*r.recommendation) : json(nullptr)},
          {"no_recommendation", r.no_recommendation},
          {"configs", configs},
          {"epoch_grids", grids},
          {"processes", processes},
          {"roles", roles},
          {"timeline", r.timeline ? to_json(*r.timeline) : json(nullptr)},
          {"diagnosis", r.diagnosis ? to_json(*r.diagnosis) : json(nullptr)},
          {"notes", r.notes}};
}

}  // namespace ingero::reports

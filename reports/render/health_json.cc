// SPDX-License-Identifier: Apache-2.0
// Worker health as JSON (explain --json "worker_health", MCP): one shape for the writer and the schema.
#include <nlohmann/json.hpp>

#include "reports/render/json_shape.h"
#include "reports/render/report_json.h"
#include "reports/text/health_text.h"

namespace ingero::reports {
namespace {

using json = nlohmann::json;

struct WordedFinding {
  const HealthFinding& finding;
  const HealthWords& words;
};

json optional_int(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }
json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

const JsonShape<WordedFinding>& health_shape() {
  using namespace json_schema;
  using W = WordedFinding;
  static const JsonShape<W> shape(
      "a worker-health finding: a kill, a hang or a resource running out, tied to a process",
      {{"kind", string_enum({"oom_kill", "shm_exhausted", "hang", "fd_limit", "memory_growth"}),
        [](const W& w) { return json(health_kind_code(w.finding.kind)); }},
       {"severity", string_enum({"HIGH", "MEDIUM", "LOW"}), [](const W& w) { return json(severity_name(w.finding.severity)); }},
       {"pid", integer("the process it concerns"), [](const W& w) { return json(w.finding.pid); }},
       {"role", string("main | worker | other"), [](const W& w) { return json(w.finding.role); }},
       {"ts_ns", integer("when it was seen (monotonic ns)"), [](const W& w) { return json(w.finding.ts_ns); }},
       {"title", string(), [](const W& w) { return json(w.words.title); }},
       {"summary", string(), [](const W& w) { return json(w.words.summary); }},
       {"evidence", array_of(string()), [](const W& w) { return json(w.words.evidence); }},
       {"change", string(), [](const W& w) { return json(w.words.change); }},
       {"fatal_signal", nullable(integer("the signal the process died of")),
        [](const W& w) { return w.finding.fatal_signal ? json(*w.finding.fatal_signal) : json(nullptr); }},
       {"growth_bytes", integer("memory grown, as growth_measured_by says"), [](const W& w) { return json(w.finding.growth_bytes); }},
       {"growth_measured_by", string_enum({"copy_on_write_faults", "private_dirty", "rss"}),
        [](const W& w) { return json(growth_measure_code(w.finding.growth_measure)); }},
       {"growth_bytes_per_s", number(), [](const W& w) { return json(w.finding.growth_bytes_per_s); }},
       {"growth_bytes_per_batch", nullable(number()), [](const W& w) { return optional_number(w.finding.growth_bytes_per_batch); }},
       {"growth_bytes_per_epoch", nullable(number()), [](const W& w) { return optional_number(w.finding.growth_bytes_per_epoch); }},
       {"copy_on_write", boolean("private memory of a forked worker"), [](const W& w) { return json(w.finding.copy_on_write); }},
       {"growth_from_fork", boolean("counted from the worker's fork, when it had no private memory"),
        [](const W& w) { return json(w.finding.growth_from_fork); }},
       {"projected_epoch_end_bytes", nullable(integer()), [](const W& w) { return optional_int(w.finding.projected_epoch_end_bytes); }},
       {"machine_memory_bytes", nullable(integer()), [](const W& w) { return optional_int(w.finding.machine_memory_bytes); }},
       {"rss_peak_bytes", nullable(integer()), [](const W& w) { return optional_int(w.finding.memory.rss_peak); }},
       {"shm_size_bytes", nullable(integer()), [](const W& w) { return optional_int(w.finding.shm_size_bytes); }},
       {"shm_used_peak_bytes", nullable(integer()), [](const W& w) { return optional_int(w.finding.shm_used_peak_bytes); }},
       {"shm_free_bytes", nullable(integer("the most of /dev/shm free at a sample")),
        [](const W& w) { return optional_int(w.finding.shm_free_bytes); }},
       {"batch_bytes", nullable(integer("the largest batch's tensor bytes, as the observer counted them")),
        [](const W& w) { return optional_int(w.finding.batch_bytes); }},
       {"in_flight_bytes", nullable(integer("batch_bytes × num_workers × prefetch_factor")),
        [](const W& w) { return optional_int(w.finding.in_flight_bytes); }},
       {"fds_peak", nullable(integer()), [](const W& w) { return optional_int(w.finding.fds_peak); }},
       {"fd_limit", nullable(integer()), [](const W& w) { return optional_int(w.finding.fd_limit); }},
       {"hang_ns", integer(), [](const W& w) { return json(w.finding.hang_ns); }},
       {"waiters", array_of(object({{"pid", integer()}, {"role", string()}, {"wchan", string()}, {"woken_by", nullable(integer())},
                                    {"python_function", nullable(string("where its main thread waited in Python, read when the hang was seen"))},
                                    {"python_file", nullable(string())}, {"python_line", nullable(integer())}})),
        [](const W& w) {
          json out = json::array();
          for (const auto& x : w.finding.waiters) {
            const auto& py = x.python_frame;
            out.push_back({{"pid", x.pid}, {"role", x.role}, {"wchan", x.wchan}, {"woken_by", optional_int(x.woken_by)},
                           {"python_function", py ? json(py->name) : json(nullptr)},
                           {"python_file", py ? json(py->file) : json(nullptr)},
                           {"python_line", py ? optional_int(py->line) : json(nullptr)}});
          }
          return out;
        }}});
  return shape;
}

}  // namespace

json to_json(const HealthAnalysis& analysis) {
  json out = json::array();
  const auto words = describe_health(analysis);
  for (size_t i = 0; i < analysis.findings.size(); ++i) out.push_back(health_shape().write({analysis.findings[i], words[i]}));
  return out;
}

json health_finding_schema() { return health_shape().schema(); }

}  // namespace ingero::reports

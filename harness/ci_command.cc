// SPDX-License-Identifier: Apache-2.0
#include "harness/ci_command.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/json_text.h"
#include "common/trace_contract.h"
#include "harness/commands.h"
#include "harness/signals.h"
#include "harness/sudo_user.h"
#include "reports/analysis/ci_gate.h"
#include "reports/render/ci_gate_render.h"

namespace ingero::harness {

namespace {

using nlohmann::json;

struct SuiteEntry {
  std::string label;
  WorkloadSetup setup;
  workloads::WorkloadConfig config;
};

struct Suite {
  std::string name;
  int repeats = 5;
  std::vector<SuiteEntry> entries;
};

Result<json> read_json_file(const std::string& flag, const std::string& path, const std::string& fix) {
  std::ifstream in(path);
  if (!in) return Error::bad_input(fmt::format("{} {} cannot be read", flag, path), fix);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto doc = parse_json(text);
  if (!doc) return Error::bad_input(fmt::format("{} {} is not usable JSON: {}", flag, path, doc.error().message), fix);
  return std::move(*doc);
}

// One entry's flags, checked as the main job checks them; it must plan exactly one run.
Result<SuiteEntry> suite_entry(const json& entry, const std::string& path) {
  const std::string fix = fmt::format("each entry of {} is {{\"label\": \"...\", \"args\": [workload flags]}} "
                                      "planning one run, e.g. [\"--mode\", \"loader\", \"--num-workers\", \"0\"]",
                                      path);
  if (!entry.is_object() || !entry.value("label", json()).is_string() || !entry.value("args", json()).is_array())
    return Error::bad_input(fmt::format("{}: an entry has no label or args list", path), fix);
  SuiteEntry e;
  e.label = entry["label"].get<std::string>();
  std::vector<std::string> args = {"--workload", "dataloader"};
  for (const json& a : entry["args"]) {
    if (!a.is_string()) return Error::bad_input(fmt::format("{}: entry '{}' has a non-string argument", path, e.label), fix);
    args.push_back(a.get<std::string>());
  }
  auto parsed = parse_command_line(args);
  if (!parsed) return Error::bad_input(fmt::format("{}: entry '{}': {}", path, e.label, parsed.error().message), fix);
  if (parsed->command != Command::workload)
    return Error::bad_input(fmt::format("{}: entry '{}' is not a workload run", path, e.label), fix);
  auto setup = prepare_workloads(parsed->workload);
  if (!setup) return Error::bad_input(fmt::format("{}: entry '{}': {}", path, e.label, setup.error().message), fix);
  if (setup->plan.runs.size() != 1)
    return Error::bad_input(fmt::format("{}: entry '{}' plans {} runs, not one", path, e.label, setup->plan.runs.size()),
                            fix);
  e.config = setup->plan.runs.front();
  e.config.device = setup->cuda ? "cuda" : "cpu";
  e.setup = std::move(*setup);
  return e;
}

Result<Suite> read_suite(const std::string& path) {
  const std::string fix = "a suite is {\"schema\": \"ingero-bench/ci-suite\", \"name\": ..., \"repeats\": 5, "
                          "\"configs\": [...]} (see results/ci/)";
  auto doc = read_json_file("--suite", path, fix);
  if (!doc) return doc.error();
  if (!doc->is_object() || doc->value("schema", "") != "ingero-bench/ci-suite")
    return Error::bad_input(fmt::format("--suite {} is not an ingero-bench CI suite", path), fix);
  Suite suite;
  suite.name = doc->value("name", "");
  suite.repeats = doc->value("repeats", 5);
  if (suite.name.empty() || suite.repeats < 3 || suite.repeats > 50)
    return Error::bad_input(fmt::format("--suite {}: needs a name and 3 to 50 repeats", path), fix);
  const json configs = doc->value("configs", json::array());
  if (!configs.is_array() || configs.empty())
    return Error::bad_input(fmt::format("--suite {} lists no configurations", path), fix);
  for (const json& entry : configs) {
    auto e = suite_entry(entry, path);
    if (!e) return e.error();
    for (const auto& other : suite.entries)
      if (other.label == e->label)
        return Error::bad_input(fmt::format("--suite {}: the label '{}' appears twice", path, e->label), fix);
    suite.entries.push_back(std::move(*e));
  }
  return suite;
}

Result<double> parse_threshold(const std::string& text) {
  const bool percent = !text.empty() && text.back() == '%';
  double value = 0;
  try {
    size_t end = 0;
    value = std::stod(percent ? text.substr(0, text.size() - 1) : text, &end);
    if (end != text.size() - (percent ? 1 : 0)) value = -1;
  } catch (const std::exception&) {
    value = -1;
  }
  if (percent) value /= 100;
  if (!(value > 0 && value < 10))
    return Error::bad_input(fmt::format("--threshold '{}' is not a slowdown like 10% or 0.1", text),
                            "e.g. --threshold 10%");
  return value;
}

// Every repeat of every entry, interleaved (round r runs each entry once), so a drift of
// the machine spreads over all configurations instead of biasing one.
Result<std::map<std::string, std::vector<double>>> measure(const Suite& suite, tracer::TraceDb& db, bool* interrupted) {
  std::map<std::string, std::vector<double>> epochs;
  for (int round = 1; round <= suite.repeats; ++round) {
    for (const SuiteEntry& e : suite.entries) {
      std::printf("[round %d/%d] %s ...\n", round, suite.repeats, e.label.c_str());
      std::fflush(stdout);
      auto dir = PrivateDir::create("ingero-bench-ci");
      if (!dir) return dir.error();
      auto request = workload_request(e.config, e.setup, dir->path(), dir->path());
      if (!request) return request.error();
      RunRequest req = std::move(*request);
      req.record_dir.reset();
      req.label = e.label;
      auto outcome = execute_run(req, db, e.setup.trace, e.setup.machine_json);
      if (!outcome) return outcome.error();
      report_outcome(*outcome, e.setup.cuda);
      if (outcome->status == contract::status::kInterrupted || interrupt_requested()) {
        *interrupted = true;
        return epochs;
      }
      const double median = outcome->result ? outcome->result->value("epoch_median_s", 0.0) : 0.0;
      if (outcome->status == contract::status::kOk && median > 0)
        epochs[e.label].push_back(median);
      else
        std::fprintf(stderr, "  %s: run %lld %s; not counted\n", e.label.c_str(),
                     static_cast<long long>(outcome->run_id), outcome->status.c_str());
    }
  }
  return epochs;
}

}  // namespace

Result<int> run_ci_command(const CiFlags& flags) {
  auto threshold = parse_threshold(flags.threshold);
  if (!threshold) return threshold.error();
  for (const auto& [flag, path] : {std::pair{"--junit", flags.junit}, std::pair{"--summary", flags.summary}})
    if (!path.empty())
      if (Status s = check_writable_path(flag, path); !s) return s.error();
  if (Status s = check_writable_path("--baseline", flags.baseline); !s) return s.error();
  auto sudo = sudo_user();
  if (!sudo) return sudo.error();
  // Under sudo what the gate writes where the user looks is theirs, like a run's.
  UserOutputs outputs(*sudo);
  for (const std::string& file : {flags.junit, flags.summary})
    if (!file.empty()) outputs.add_file(file);
  if (flags.update_baseline) outputs.add_file(flags.baseline);
  if (!flags.db.empty()) outputs.add_db(flags.db);
  auto suite = read_suite(flags.suite);
  if (!suite) return suite.error();
  std::optional<reports::CiBaseline> baseline;
  if (!flags.update_baseline) {
    auto doc = read_json_file("--baseline", flags.baseline,
                              "create it with --update-baseline (on the machine kind the gate runs on)");
    if (!doc) return doc.error();
    auto parsed = reports::ci_baseline_from_json(*doc, flags.baseline);
    if (!parsed) return parsed.error();
    if (parsed->suite != suite->name)
      return Error::bad_input(fmt::format("--baseline {} is of suite '{}', not '{}'", flags.baseline, parsed->suite,
                                          suite->name),
                              "pass the baseline of this suite, or create one with --update-baseline");
    baseline = std::move(*parsed);
  }
  const std::string machine = suite->entries.front().setup.machine_json;

  std::optional<PrivateDir> scratch;
  std::string db_path = flags.db;
  if (db_path.empty()) {
    auto dir = PrivateDir::create("ingero-bench-ci-db");
    if (!dir) return dir.error();
    scratch.emplace(std::move(*dir));
    db_path = scratch->file("ci.db");
  }
  auto db = tracer::TraceDb::open(db_path);
  if (!db) return db.error();
  bool interrupted = false;
  auto epochs = measure(*suite, *db, &interrupted);
  if (!epochs) return epochs.error();
  if (interrupted) return interrupt_exit_code();

  if (flags.update_baseline) {
    reports::CiBaseline fresh{suite->name, json::parse(machine), *epochs};
    if (Status s = write_file_atomically(flags.baseline, to_json(fresh).dump(2) + "\n"); !s) return s.error();
    std::printf("baseline of suite %s written to %s\n", suite->name.c_str(), flags.baseline.c_str());
    return kExitOk;
  }
  std::vector<std::string> order;
  for (const auto& e : suite->entries) order.push_back(e.label);
  const reports::GateReport report =
      reports::gate(suite->name, order, *baseline, *epochs, json::parse(machine), {*threshold, 0.95});
  const std::string summary = reports::render_markdown(report);
  std::printf("\n%s", summary.c_str());
  if (!flags.summary.empty())
    if (Status s = write_file_atomically(flags.summary, summary); !s) return s.error();
  if (!flags.junit.empty())
    if (Status s = write_file_atomically(flags.junit, reports::render_junit(report)); !s) return s.error();
  return report.failed() ? kExitFailure : kExitOk;
}

}  // namespace ingero::harness

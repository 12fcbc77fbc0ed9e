// SPDX-License-Identifier: Apache-2.0
// Builds trace databases with known content, for tests, committed fixtures and the
// explain benchmark. The schema and op codes are the tracer's (common/trace_schema.h);
// only ops of the trace contract can be added, and every library call added as an event
// is also counted in call_stats and call_histograms as the tracer counts a stored call.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/sqlite.h"
#include "reports/data/trace_data.h"

namespace ingero::reports::testing {

struct RunSpec {
  std::string label = "run";
  std::string kind = "workload";
  std::optional<std::string> config_json;
  std::optional<std::string> result_json;
  std::string machine_json = R"({"cpu_count": 4, "cpu_model": "test", "memory_bytes": 17179869184,
                                 "kernel": "6.1", "gpu": null, "torch_version": "2.11"})";
  double started_unix = 1.7e9;  // wall clock when start_ns was read
  int64_t start_ns = 0;
  std::optional<int64_t> end_ns;
  int64_t root_pid = 100;
  std::string status = "ok";
  bool traced = true;
  std::optional<int64_t> sweep_id;
  std::optional<std::string> sweep_point;
  std::optional<std::string> sweep_phase;
  std::optional<std::string> node;  // the tracer writes the hostname; merge fills in a missing one
};

class TraceFixture {
 public:
  // Replaces any file at path with an empty trace DB (schema applied, ops filled).
  static std::unique_ptr<TraceFixture> create(const std::string& path);

  int64_t add_run(const RunSpec& run);
  void add_thread(int64_t run_id, const ThreadRecord& thread);
  void add_thread_stats(int64_t run_id, const ThreadStatsRecord& stats);
  void add_histogram(int64_t run_id, int64_t pid, const std::string& metric, int slot, int64_t count);
  void set_setting(int64_t run_id, const std::string& key, const std::string& value);
  void add_loss(int64_t run_id, const std::string& source, int64_t dropped);
  void add_event(int64_t run_id, const std::string& op, int64_t ts_ns, int64_t dur_ns, int64_t pid,
                 int64_t tid, std::optional<int64_t> bytes = std::nullopt,
                 std::optional<int64_t> arg = std::nullopt);
  // Calls the tracer counted without storing them (fast kernel launches below --cuda-detail full).
  void add_unstored_calls(int64_t run_id, const std::string& op, int64_t pid, int64_t tid, int64_t calls,
                          int64_t each_ns);

  // A CPU profile's rows, as the tracer's writer interns them (profile_frames, profile_stacks,
  // profile_samples); tests/reports/profile_scenario.h builds them from stacks.
  void add_profile_frame(int64_t run_id, int64_t frame_id, const ProfileFrame& frame);
  void add_profile_stack(int64_t run_id, int64_t stack_id, std::optional<int64_t> parent_id, int64_t frame_id);
  void add_profile_samples(int64_t run_id, int64_t tid, int64_t stack_id, int64_t bucket_ns, int64_t samples);
  // The stack that made an event (event_stacks), as the tracer and the observer's reader write it.
  void add_event_stack(int64_t run_id, int64_t tid, int64_t ts_ns, const std::string& op, int64_t stack_id);

  void begin();   // group many inserts in one transaction
  void commit();
  const sql::Connection& db() const { return db_; }
  int op_code(const std::string& name) const;  // throws for an op outside the contract

 private:
  explicit TraceFixture(sql::Connection db);
  void check(bool ok, const std::string& what) const;
  void count_call(int64_t run_id, int op, int64_t pid, int64_t tid, int64_t calls, int64_t each_ns,
                  std::optional<int64_t> bytes, bool stored);

  sql::Connection db_;
  sql::Statement insert_event_;
  sql::Statement count_call_;
  sql::Statement count_histogram_;
};

}  // namespace ingero::reports::testing

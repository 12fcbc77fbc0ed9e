// Builds trace databases with known content from tracer/schema.sql, for tests,
// committed fixtures and the explain benchmark.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/sqlite.h"
#include "reports/trace_data.h"

namespace ingero::reports::testing {

struct RunSpec {
  std::string label = "run";
  std::string kind = "workload";
  std::optional<std::string> config_json;
  std::optional<std::string> result_json;
  std::string machine_json = R"({"cpu_count": 4, "cpu_model": "test", "memory_bytes": 17179869184,
                                 "kernel": "6.1", "gpu": null, "torch_version": "2.11"})";
  int64_t start_ns = 0;
  std::optional<int64_t> end_ns;
  int64_t root_pid = 100;
  std::string status = "ok";
  bool traced = true;
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

  void begin();   // group many inserts in one transaction
  void commit();
  const sql::Connection& db() const { return db_; }
  int op_code(const std::string& name) const;

 private:
  explicit TraceFixture(sql::Connection db);
  void check(bool ok, const std::string& what) const;

  sql::Connection db_;
  std::map<std::string, int> op_codes_;
  sql::Statement insert_event_;
};

}  // namespace ingero::reports::testing

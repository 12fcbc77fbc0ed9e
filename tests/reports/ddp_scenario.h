// SPDX-License-Identifier: Apache-2.0
// One node's share of a DDP job as the harness and the tracer store it: the launcher, each
// rank's process (its main loop) with one DataLoader worker process, the ranks' batch timings
// and records, and the world size the tracer read from the ranks' WORLD_SIZE. Every rank steps
// once per kDdpPeriod: it waits for its batch, then computes; a rank that waits sleeps in its
// main loop meanwhile, and a rank that does not leaves its worker idle.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/reports/scenario.h"

namespace ingero::reports::testing {

inline constexpr int kDdpBatches = 50;
inline constexpr int64_t kDdpPeriod = 20 * kMs;
inline constexpr int64_t kDdpLauncher = 50;  // torchrun: no rank, no main loop

struct DdpRank {
  int rank = 0;
  int64_t pid = 0;      // the rank's process; its worker is pid + 1
  int64_t wait_ns = 0;  // per batch; the step takes the rest of the period
};

struct DdpNode {
  std::optional<std::string> node;  // runs.node
  double started_unix = 1.7e9;
  int64_t start_ns = 0;             // the node's monotonic clock when tracing began
  std::vector<DdpRank> ranks;
  std::optional<int> world_size;    // the tracer's run setting
};

struct DdpFixture {
  std::string path;
  std::unique_ptr<TraceFixture> db;  // open until reset, for more rows
  int64_t run = 0;
};

inline DdpFixture write_ddp_node(const std::string& name, const DdpNode& spec) {
  DdpFixture out{temp_db_path(name), nullptr, 0};
  out.db = TraceFixture::create(out.path);
  TraceFixture& db = *out.db;
  RunSpec run;
  const size_t ranks = spec.ranks.size();
  run.label = fmt::format("python w1 pf2 ranks{} train", ranks);
  run.config_json = fmt::format(R"({{"mode":"python","num_workers":1,"prefetch_factor":2,"pin_memory":false,)"
                                R"("persistent_workers":false,"shuffle":true,"cpus":0,"train":true,"ranks":{},)"
                                R"("samples":100000,"features":100,"batch_size":1000,"device":"cpu"}})",
                                ranks);
  run.machine_json = R"({"cpu_count": 2, "cpu_model": "test", "kernel": "6.1", "gpu": null})";
  nlohmann::json records = nlohmann::json::array();
  double wait_fractions = 0;
  for (const DdpRank& r : spec.ranks) {
    const double wait_fraction = static_cast<double>(r.wait_ns) / kDdpPeriod;
    wait_fractions += wait_fraction;
    records.push_back({{"rank", r.rank}, {"pid", r.pid}, {"main_tid", r.pid}, {"status", "ok"},
                       {"epoch_seconds", {1.0}}, {"epoch_median_s", 1.0}, {"wait_fraction", wait_fraction}});
  }
  run.result_json = nlohmann::json({{"epoch_seconds", {1.0}}, {"epoch_median_s", 1.0},
                                    {"wait_fraction", wait_fractions / static_cast<double>(ranks)},
                                    {"ranks", records}})
                        .dump();
  run.started_unix = spec.started_unix;
  run.start_ns = spec.start_ns;
  run.end_ns = spec.start_ns + kDdpBatches * kDdpPeriod + 10 * kMs;
  run.root_pid = kDdpLauncher;
  run.node = spec.node;
  out.run = db.add_run(run);
  const int64_t begin = spec.start_ns, end = *run.end_ns;
  db.add_thread(out.run, {kDdpLauncher, kDdpLauncher, 1, "python3", "other", begin, end, std::nullopt, std::nullopt});
  for (const DdpRank& r : spec.ranks) {
    db.add_thread(out.run, {r.pid, r.pid, kDdpLauncher, "python3", "main", begin, end, r.rank, std::nullopt});
    db.add_thread(out.run, {r.pid + 1, r.pid + 1, r.pid, "pt_data_worker", "worker", begin, end, r.rank, std::nullopt});
  }
  if (spec.world_size) db.set_setting(out.run, "world_size", std::to_string(*spec.world_size));
  db.begin();
  for (int i = 0; i < kDdpBatches; ++i) {
    const int64_t t = spec.start_ns + i * kDdpPeriod;
    for (const DdpRank& r : spec.ranks) {
      db.add_event(out.run, "batch_wait", t, r.wait_ns, r.pid, r.pid, std::nullopt, i);
      db.add_event(out.run, "batch_compute", t + r.wait_ns, kDdpPeriod - r.wait_ns, r.pid, r.pid, std::nullopt, i);
      if (r.wait_ns >= kMs)
        db.add_event(out.run, "offcpu_blocked", t, r.wait_ns, r.pid, r.pid);  // the main loop sleeps
      else
        db.add_event(out.run, "offcpu_blocked", t, 15 * kMs, r.pid + 1, r.pid + 1);  // the worker idles
    }
  }
  db.commit();
  return out;
}

}  // namespace ingero::reports::testing

// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "reports/text/chain_text.h"
#include "reports/render/commands.h"
#include "reports/analysis/run_analysis.h"
#include "tests/reports/analyzed.h"
#include "tests/reports/scenario.h"

namespace ingero::reports::testing {
namespace {

// Fast synchronisations every millisecond on the main thread, one in 200 slow.
void add_sync_calls(TraceFixture& db, int64_t run, int count, int64_t slow_every, int64_t slow_ns) {
  for (int i = 0; i < count; ++i) {
    const int64_t ts = 10 * kMs + i * kMs;
    const bool slow = slow_every > 0 && i % slow_every == slow_every - 1;
    db.add_event(run, "cudaStreamSynchronize", ts, slow ? slow_ns : 20 * kUs, kMain, kMain);
  }
}

const CausalChain* find_chain(const RunAnalysis& a, const std::string& victim, const std::string& cause) {
  for (const auto& c : a.chains.chains) {
    if (c.victim == victim && c.cause.code() == cause) return &c;
  }
  return nullptr;
}

TEST(CausalChains, PreemptionOfTheCallingThreadExplainsTheSlowCall) {
  const std::string path = temp_db_path("self-stall");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 2000 * kMs);
    db->begin();
    add_sync_calls(*db, run, 1000, 0, 0);
    // One 30 ms call at 1,500 ms, preempted for 20 ms of it.
    db->add_event(run, "cudaStreamSynchronize", 1500 * kMs, 30 * kMs, kMain, kMain);
    db->add_event(run, "offcpu_preempted", 1505 * kMs, 20 * kMs, kMain, kMain);
    db->commit();
  }
  const RunAnalysis a = analyze_path(path);
  const CausalChain* chain = find_chain(a, "cudaStreamSynchronize", "main.cpu_wait");
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(chain->lost_ns, 20 * kMs);
  EXPECT_EQ(chain->calls_explained, 1);
  EXPECT_EQ(chain->victim_calls, 1);
  EXPECT_EQ(chain->evidence.context_switches, 1);
  EXPECT_EQ(chain->rank, 1);
  EXPECT_NEAR(chain->share_of_victim, 20.0 / 30.0, 1e-9);
  const ChainWords words = words_of(a, *chain);
  EXPECT_FALSE(words.root_cause.empty());
  EXPECT_FALSE(words.recommendation.empty());
  ASSERT_EQ(words.timeline.size(), 4u);
  EXPECT_EQ(words.timeline[2].rfind("[CUDA] cudaStreamSynchronize p99=", 0), 0u) << words.timeline[2];
  // The slow calls were those from the tail's threshold on, which the summary holds as a number.
  const auto sync = std::find_if(a.chains.victims.begin(), a.chains.victims.end(),
                                 [](const VictimSummary& v) { return v.op == "cudaStreamSynchronize"; });
  ASSERT_NE(sync, a.chains.victims.end());
  EXPECT_EQ(sync->selection, VictimSelection::calls_in_tail);
  EXPECT_EQ(sync->threshold_ns, slow_threshold(sync->stats, a.chains.thresholds));
  EXPECT_EQ(sync->threshold_ns, a.chains.thresholds.slow_min_ns);  // 1 ms: above p99 and 10 × p50 here
  EXPECT_EQ(selection_text(*sync, a.chains.thresholds),
            "calls ≥ 1 ms (the largest of p99 = 20 µs, 10 × p50 = 200 µs, 1 ms)");
}

TEST(CausalChains, StallOnAnUnrelatedThreadIsNotBlamed) {
  const std::string path = temp_db_path("unrelated-stall");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 2000 * kMs);
    db->begin();
    add_sync_calls(*db, run, 1000, 0, 0);
    db->add_event(run, "cudaStreamSynchronize", 1500 * kMs, 30 * kMs, kMain, kMain);
    db->add_event(run, "offcpu_preempted", 1505 * kMs, 20 * kMs, kMain, kOther);
    db->add_event(run, "offcpu_blocked", 1505 * kMs, 20 * kMs, kWorkerA, kWorkerA);
    db->commit();
  }
  const RunAnalysis a = analyze_path(path);
  for (const auto& chain : a.chains.chains) {
    EXPECT_NE(chain.cause.kind, CauseKind::cpu_wait) << chain.cause.code();
    EXPECT_NE(chain.cause.kind, CauseKind::blocked) << chain.cause.code();
    EXPECT_EQ(chain.evidence.context_switches, 0) << chain.cause.code();
  }
  // The call's time is the calling thread's own on-CPU time: nothing else is claimed.
  const CausalChain* on_cpu = find_chain(a, "cudaStreamSynchronize", "main.on_cpu");
  ASSERT_NE(on_cpu, nullptr);
  EXPECT_EQ(on_cpu->lost_ns, 30 * kMs);
}

// 20 batches: the main thread waits 10 ms (blocked) then computes 10 ms.
void add_batches(TraceFixture& db, int64_t run, int batches) {
  for (int b = 0; b < batches; ++b) {
    const int64_t start = 10 * kMs + b * 20 * kMs;
    db.add_event(run, "batch_wait", start, 10 * kMs, kMain, kMain, std::nullopt, b);
    db.add_event(run, "offcpu_blocked", start, 10 * kMs, kMain, kMain);
    db.add_event(run, "batch_compute", start + 10 * kMs, 10 * kMs, kMain, kMain, std::nullopt, b);
  }
}

TEST(CausalChains, PreemptedWorkerIsFoundOnTheProducerSide) {
  const std::string path = temp_db_path("producer");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 500 * kMs);
    db->begin();
    add_batches(*db, run, 20);
    for (int b = 0; b < 20; ++b) {
      const int64_t start = 10 * kMs + b * 20 * kMs;
      db->add_event(run, "offcpu_preempted", start, 10 * kMs, kWorkerA, kWorkerA);  // runnable, no CPU
      db->add_event(run, "page_faults", start + kMs, kMs, kWorkerB, kWorkerB, std::nullopt, 64);  // B faults
      db->add_event(run, "offcpu_blocked", start, 10 * kMs, kPin, kPin);            // pin thread idle
    }
    db->commit();
  }
  const RunAnalysis a = analyze_path(path);
  EXPECT_EQ(a.metrics.verdict, InputBound::highly);
  const CausalChain* preempted = find_chain(a, "batch_wait", "worker.cpu_wait");
  const CausalChain* working = find_chain(a, "batch_wait", "worker.on_cpu");
  ASSERT_NE(preempted, nullptr);
  ASSERT_NE(working, nullptr);
  // Both workers were active: the main thread's 200 ms of waiting splits evenly.
  EXPECT_EQ(preempted->lost_ns, 100 * kMs);
  EXPECT_EQ(working->lost_ns, 100 * kMs);
  EXPECT_EQ(preempted->calls_explained, 20);
  EXPECT_EQ(working->evidence.page_faults, 20 * 64);
  EXPECT_EQ(preempted->severity, Severity::high);
  EXPECT_EQ(find_chain(a, "batch_wait", "pin.on_cpu"), nullptr);
  ASSERT_EQ(a.chains.victims.size(), 1u);
  EXPECT_EQ(a.chains.victims[0].count, 20);
  // An input-bound run's every wait is taken, and the words say why.
  EXPECT_EQ(a.chains.victims[0].selection, VictimSelection::every_wait_input_bound);
  EXPECT_EQ(a.chains.victims[0].verdict, InputBound::highly);
  EXPECT_EQ(selection_text(a.chains.victims[0], a.chains.thresholds), "every batch wait (the run is HIGHLY input-bound)");
}

// A dataset read from per-sample files with a cold page cache, the device measured at 500 MB/s.
constexpr const char* kColdFilesResult =
    R"({"storage": {"storage": "files", "page_cache": "cold", "device": {"name": "vda", "seq_read_mb_s": 500}}})";

// A loader run's configuration (loader_config, no pinning) with its dataset on disk.
std::string disk_config(int workers, const std::string& storage, const std::string& format,
                        const std::string& page_cache) {
  auto config = nlohmann::json::parse(loader_config(workers, 2, /*pin=*/false));
  config["storage"] = storage;
  config["format"] = format;
  config["page_cache"] = page_cache;
  if (format == "jpeg") config["image_size"] = 64;
  return config.dump();
}

// A run of 500 ms with a main thread and `workers` worker processes (pid == tid).
int64_t add_storage_run(TraceFixture& db, const std::string& config, const std::vector<int64_t>& workers,
                        std::optional<std::string> result = std::nullopt) {
  RunSpec spec;
  spec.label = "loader w" + std::to_string(workers.size());
  spec.config_json = config;
  spec.result_json = std::move(result);
  spec.end_ns = 500 * kMs;
  const int64_t run = db.add_run(spec);
  db.add_thread(run, {kMain, kMain, 1, "python3", "main", 0, 500 * kMs, std::nullopt, std::nullopt});
  for (int64_t w : workers)
    db.add_thread(run, {w, w, kMain, "ib-worker", "worker", 0, 500 * kMs, std::nullopt, std::nullopt});
  return run;
}

bool has_change(const CausalChain& chain, const std::string& knob, const std::string& value) {
  for (const Change& c : chain.changes)
    if (c.knob == knob && c.value == value) return true;
  return false;
}

TEST(CausalChains, WorkersBlockedOnReadsAreAnIoCauseWithTheirReadsAndTheDeviceRate) {
  const std::string path = temp_db_path("io-workers");
  {
    auto db = TraceFixture::create(path);
    const int64_t run =
        add_storage_run(*db, disk_config(2, "files", "raw", "cold"), {kWorkerA, kWorkerB}, kColdFilesResult);
    db->begin();
    add_batches(*db, run, 20);
    for (int b = 0; b < 20; ++b) {
      const int64_t start = 10 * kMs + b * 20 * kMs;
      for (int64_t w : {kWorkerA, kWorkerB}) {
        db->add_event(run, "offcpu_io", start, 10 * kMs, w, w);           // both asleep on the disk
        db->add_event(run, "block_io", start, 9 * kMs, w, w, 1 << 20);    // a 1 MiB read each
      }
    }
    ThreadStatsRecord stats;
    stats.tid = stats.pid = kWorkerA;
    stats.counters.io_count = 20;
    stats.counters.io_bytes = 20 << 20;
    stats.counters.iowait_count = 20;
    stats.counters.iowait_ns = 200 * kMs;
    stats.counters.cache_pages_added = 20 * 256;
    db->add_thread_stats(run, stats);
    db->commit();
  }
  const RunAnalysis a = analyze_path(path);
  const CausalChain* io = find_chain(a, "batch_wait", "worker.io_wait");
  ASSERT_NE(io, nullptr);
  EXPECT_EQ(io->lost_ns, 200 * kMs);  // every wait, shared by two readers of one cause
  EXPECT_EQ(io->evidence.io_wait_ns, 2 * 20 * 10 * kMs);
  EXPECT_EQ(io->evidence.read_bytes, int64_t{2 * 20} << 20);
  EXPECT_EQ(io->evidence.threads, 2);
  EXPECT_EQ(find_chain(a, "batch_wait", "worker.on_cpu"), nullptr);
  const ChainWords words = words_of(a, *io);
  EXPECT_NE(words.cause_label.find("reading from storage"), std::string::npos) << words.cause_label;
  // Overlap more reads, and remove them: the machine has 4 cores, so up to 8 sleeping readers.
  EXPECT_TRUE(has_change(*io, "num_workers", "4"));
  EXPECT_TRUE(has_change(*io, "prefetch_factor", "4"));
  EXPECT_TRUE(has_change(*io, "storage", "shards"));
  EXPECT_TRUE(has_change(*io, "page_cache", "warm"));
  bool io_line = false;
  for (const std::string& line : words.timeline)
    if (line.rfind("[IO] ", 0) == 0) {
      io_line = true;
      EXPECT_NE(line.find("of the device's measured sequential 500 MB/s (vda)"), std::string::npos) << line;
      EXPECT_NE(line.find("5,120 pages read into the page cache"), std::string::npos) << line;
    }
  EXPECT_TRUE(io_line);
  EXPECT_EQ(a.metrics.io.iowait_ns, 200 * kMs);
  EXPECT_EQ(a.metrics.io.device_read_mb_s, 500.0);
  ASSERT_TRUE(a.metrics.io.read_mb_s.has_value());
  EXPECT_NEAR(*a.metrics.io.read_mb_s, (20.0 * (1 << 20) / 1e6) / 0.5, 1e-6);
}

TEST(CausalChains, WorkersOnCpuWithAJpegDatasetAreDecodingAndNotToldToBatch) {
  const std::string path = temp_db_path("jpeg-workers");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_storage_run(*db, disk_config(2, "files", "jpeg", "warm"), {kWorkerA, kWorkerB});
    db->begin();
    add_batches(*db, run, 20);  // the workers are on CPU throughout: no interval of theirs is recorded
    db->commit();
  }
  const RunAnalysis a = analyze_path(path);
  const CausalChain* cpu = find_chain(a, "batch_wait", "worker.on_cpu");
  ASSERT_NE(cpu, nullptr);
  const ChainWords words = words_of(a, *cpu);
  EXPECT_NE(words.root_cause.find("decoding and transforming JPEG"), std::string::npos) << words.root_cause;
  EXPECT_NE(words.recommendation.find("decode fewer bytes"), std::string::npos) << words.recommendation;
  // One gather per batch cannot skip a decode per sample: loader-batched is not suggested from disk.
  EXPECT_FALSE(has_change(*cpu, "mode", "loader-batched"));
  EXPECT_TRUE(has_change(*cpu, "num_workers", "3"));
}

TEST(CausalChains, MainThreadReadingItsOwnBatchesIsAnIoCause) {
  const std::string path = temp_db_path("io-main");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_storage_run(*db, disk_config(0, "shards", "raw", "warm"), {});
    db->begin();
    for (int b = 0; b < 20; ++b) {
      const int64_t start = 10 * kMs + b * 20 * kMs;
      db->add_event(run, "batch_wait", start, 10 * kMs, kMain, kMain, std::nullopt, b);
      db->add_event(run, "offcpu_io", start + 2 * kMs, 6 * kMs, kMain, kMain);  // 6 of 10 ms on the disk
      db->add_event(run, "batch_compute", start + 10 * kMs, 10 * kMs, kMain, kMain, std::nullopt, b);
    }
    db->commit();
  }
  const RunAnalysis a = analyze_path(path);
  const CausalChain* io = find_chain(a, "batch_wait", "main.io_wait");
  ASSERT_NE(io, nullptr);
  EXPECT_EQ(io->lost_ns, 20 * 6 * kMs);
  EXPECT_EQ(io->evidence.io_wait_ns, 20 * 6 * kMs);
  const CausalChain* cpu = find_chain(a, "batch_wait", "main.on_cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->lost_ns, 20 * 4 * kMs);
  EXPECT_TRUE(has_change(*io, "num_workers", "2"));
  EXPECT_FALSE(has_change(*io, "storage", "shards"));  // already shards
  EXPECT_FALSE(has_change(*io, "page_cache", "warm"));  // already warm
  const ChainWords words = words_of(a, *io);
  EXPECT_NE(words.root_cause.find("read the dataset from storage itself"), std::string::npos) << words.root_cause;
}

TEST(CausalChains, WorkerStartUpAndPinnedAllocationAreSeparateCauses) {
  const std::string path = temp_db_path("startup");
  {
    auto db = TraceFixture::create(path);
    RunSpec spec;
    spec.config_json = loader_config(1);
    spec.end_ns = 500 * kMs;
    const int64_t run = db->add_run(spec);
    db->add_thread(run, {kMain, kMain, 1, "python3", "main", 0, 500 * kMs, std::nullopt, std::nullopt});
    db->add_thread(run, {kPin, kMain, std::nullopt, "ib-pin", "pin", 0, 500 * kMs, std::nullopt, std::nullopt});
    // The worker is forked 2 ms into the first wait.
    db->add_thread(run, {kWorkerA, kWorkerA, kMain, "ib-worker-0", "worker", 12 * kMs, 500 * kMs, std::nullopt,
                         std::nullopt});
    db->begin();
    add_batches(*db, run, 20);
    db->add_event(run, "fork", 12 * kMs, 0, kMain, kMain, std::nullopt, kWorkerA);
    // The loader's own measurement: forked at 12 ms, ready for work at 30 ms.
    db->add_event(run, "worker_start", 12 * kMs, 18 * kMs, kWorkerA, kWorkerA, std::nullopt, 0);
    db->add_event(run, "offcpu_blocked", 0, 10 * kMs, kPin, kPin);
    db->add_event(run, "cudaHostAlloc", 10 * kMs, 2 * kMs, kMain, kPin);
    db->add_event(run, "offcpu_blocked", 12 * kMs, 488 * kMs, kPin, kPin);
    db->commit();
  }
  const RunAnalysis a = analyze_path(path);
  const CausalChain* startup = find_chain(a, "batch_wait", "worker.startup");
  const CausalChain* alloc = find_chain(a, "batch_wait", "pin.pinned_alloc");
  ASSERT_NE(startup, nullptr);
  ASSERT_NE(alloc, nullptr);
  EXPECT_EQ(alloc->lost_ns, 2 * kMs);
  EXPECT_EQ(startup->lost_ns, 8 * kMs);  // from the fork to the end of the first wait
  EXPECT_EQ(startup->evidence.forks, 1);
  EXPECT_NE(words_of(a, *startup).recommendation.find("persistent_workers=True"), std::string::npos);
}

TEST(CausalChains, CleanTraceHasNoChain) {
  const std::string path = temp_db_path("clean");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 2000 * kMs);
    db->begin();
    add_sync_calls(*db, run, 1000, 0, 0);
    for (int b = 0; b < 100; ++b) {  // 0.1 ms of waiting per 20 ms batch: not input-bound
      db->add_event(run, "batch_wait", 10 * kMs + b * 20 * kMs, 100 * kUs, kMain, kMain);
      db->add_event(run, "batch_compute", 10 * kMs + b * 20 * kMs + 100 * kUs, 19900 * kUs, kMain, kMain);
    }
    db->commit();
  }
  const RunAnalysis a = analyze_path(path);
  EXPECT_EQ(a.metrics.verdict, InputBound::not_input_bound);
  EXPECT_TRUE(a.chains.chains.empty());
  EXPECT_TRUE(a.chains.victims.empty());
}

TEST(CausalChains, RepeatedCausesMergeIntoOneChain) {
  const std::string path = temp_db_path("merge");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 12000 * kMs);
    db->begin();
    add_sync_calls(*db, run, 10000, 200, 40 * kMs);  // 50 slow calls
    for (int i = 199; i < 10000; i += 200) {
      db->add_event(run, "offcpu_preempted", 10 * kMs + i * kMs + kMs, 30 * kMs, kMain, kMain);
    }
    db->commit();
  }
  const RunAnalysis a = analyze_path(path);
  int preemption_chains = 0;
  for (const auto& c : a.chains.chains) preemption_chains += c.cause.code() == "main.cpu_wait" ? 1 : 0;
  EXPECT_EQ(preemption_chains, 1);
  const CausalChain* chain = find_chain(a, "cudaStreamSynchronize", "main.cpu_wait");
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(chain->calls_explained, 50);
  EXPECT_EQ(chain->victim_calls, 50);
  EXPECT_EQ(chain->lost_ns, 50 * 30 * kMs);
  EXPECT_EQ(chain->evidence.context_switches, 50);
}

TEST(CausalChains, SinceWindowKeepsOnlyTheEnd) {
  const std::string path = temp_db_path("since");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 2000 * kMs);
    db->begin();
    add_sync_calls(*db, run, 1900, 0, 0);
    db->add_event(run, "cudaStreamSynchronize", 100 * kMs, 30 * kMs, kMain, kMain);
    db->add_event(run, "offcpu_preempted", 105 * kMs, 20 * kMs, kMain, kMain);
    db->commit();
  }
  EXPECT_NE(find_chain(analyze_path(path), "cudaStreamSynchronize", "main.cpu_wait"), nullptr);
  EXPECT_EQ(find_chain(analyze_path(path, 1.0), "cudaStreamSynchronize", "main.cpu_wait"), nullptr);
}

TEST(ExplainCommand, RendersJsonAndText) {
  const std::string path = temp_db_path("explain-json");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 2000 * kMs);
    db->begin();
    add_sync_calls(*db, run, 1000, 0, 0);
    db->add_event(run, "cudaStreamSynchronize", 1500 * kMs, 30 * kMs, kMain, kMain);
    db->add_event(run, "offcpu_preempted", 1505 * kMs, 20 * kMs, kMain, kMain);
    db->add_thread_stats(run, {kMain, kMain, {10, 1, 900 * kMs, 100 * kMs, 20 * kMs, 5, kMs, 3, 12288, 7}});
    db->add_histogram(run, kMain, "runq_us", 3, 10);
    db->commit();
  }
  {
    std::ostringstream out;
    ExplainOptions options;
    options.db = path;
    options.json = true;
    options.per_process = true;
    ASSERT_TRUE(explain(options, out).ok());
    const auto doc = nlohmann::json::parse(out.str());
    EXPECT_EQ(doc["run"]["run_id"], 1);
    EXPECT_EQ(doc["causal_chains"][0]["cause"], "main.cpu_wait");
    EXPECT_EQ(doc["processes"][0]["role"], "main");
    EXPECT_EQ(doc["processes"][0]["runq_p50_bucket_us"]["lower_us"], 8.0);
    EXPECT_TRUE(doc["chain_thresholds"].contains("severity"));
  }
  std::ostringstream text;
  ExplainOptions options;
  options.db = path;
  ASSERT_TRUE(explain(options, text).ok());
  EXPECT_NE(text.str().find("VERDICT"), std::string::npos);
  EXPECT_NE(text.str().find("#1 [LOW] cudaStreamSynchronize"), std::string::npos) << text.str();
}

}  // namespace
TEST(ChainText, AHostBoundLoopWithWorkersBesideItIsWordedAndChangedAsSuch) {
  // The run's threads: main and a worker. Nothing waited, so the chain analysis found no producer
  // on any wait (its producers stay empty), as analyze_run hands a host-bound run to the words.
  RunContext context;
  context.run.kind = "command";
  context.run.config = nlohmann::json::parse(R"({"mode":"loader","num_workers":1})");
  context.run.end_ns = 10 * kMs;
  context.threads = {{kMain, kMain, 1, "python3", "main", 0, 10 * kMs, std::nullopt, std::nullopt},
                     {kWorkerA, kWorkerA, kMain, "pt_data_worker", "worker", 0, 10 * kMs, std::nullopt, std::nullopt}};
  RunMetrics metrics;
  metrics.verdict = InputBound::host_bound;
  metrics.main_host_share = 0.9;
  metrics.cores = 4;
  const std::vector<CallLatencyRow> calls;
  const TimeWindow window{0, 10 * kMs};
  auto chain = host_bound_chain(context, metrics, window, calls);
  ASSERT_TRUE(chain.has_value());
  EXPECT_TRUE(chain->changes.empty());  // the loop's own work: no loader knob removes it
  ChainAnalysis analysis;
  analysis.chains.push_back(*chain);
  const ChainWords words = describe_chains(analysis, context, metrics, calls).front();
  EXPECT_NE(words.root_cause.find("with loader workers beside it"), std::string::npos) << words.root_cause;
  EXPECT_NE(words.timeline[1].find("loader workers ran beside it"), std::string::npos) << words.timeline[1];
  EXPECT_EQ(words.recommendation.find("Move batch building"), std::string::npos) << words.recommendation;
}

TEST(ChainText, AChangeCheckSaysWhichRunMeasuredItOrTheCommandThatWould) {
  ChangeCheck unmeasured{{"num_workers", "4"}, std::nullopt, "", std::nullopt, std::nullopt, "ingero-bench --x"};
  EXPECT_EQ(change_check_text(unmeasured),
            "num_workers=4: unmeasured (no run of this DB differs by it alone); measure it with: ingero-bench --x");
  ChangeCheck measured{{"num_workers", "4"}, 7, "loader w4", 2.0, 1.0, ""};
  EXPECT_EQ(change_check_text(measured),
            "num_workers=4: measured by run 7 'loader w4': 1.00 s per epoch vs 2.00 s here (0.5× this run's time)");
  measured.this_median_s.reset();  // a run without epochs still names itself, never "unmeasured"
  EXPECT_EQ(change_check_text(measured), "num_workers=4: measured by run 7 'loader w4'");
}

}  // namespace ingero::reports::testing

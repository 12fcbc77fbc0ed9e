// SPDX-License-Identifier: Apache-2.0
// Sustained ingest through the tracer's real writer path (bounded queue -> writer
// thread -> SQLite, batched transactions): events are offered at a fixed rate from one
// producer thread, as the ring-buffer consumer would, for --seconds, then the writer is
// finished (every staged burst moved into the indexed events table). One benchmark per
// offered rate, one iteration each (the offer and the drain are the measure), on a fresh
// DB. Counters: offered, written, dropped (the queue was full: the events a real trace
// would count as lost), the rate stored while offering, the most events staged for
// indexing, and the seconds the writer needed after the offer ended.
//
//   ingero_ingest_bench [--seconds S] [--rates R1,R2,...] [--db PATH] [--benchmark_...]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sqlite3.h>

#include "bench/bench_context.h"
#include "tracer/event_writer.h"

using Clock = std::chrono::steady_clock;
using ingero::tracer::EventWriter;

namespace {

constexpr size_t kQueueCapacity = 1u << 20;

struct Options {
  double seconds = 5;
  std::vector<int64_t> rates = {250'000, 500'000, 1'000'000, 1'500'000, 2'000'000, 3'000'000};
  std::string db = "/tmp/ingero-ingest-bench.db";
};
Options options;

void remove_db(const std::string& db) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
}

// A CUDA-call-shaped event with every field present (the widest row).
ib_event sample_event(uint64_t i) {
  ib_event e{};
  e.ts_ns = 1'000'000 + i * 100;
  e.dur_ns = 2500 + i % 97;
  e.pid = 4242;
  e.tid = 4242 + i % 8;
  e.op = IB_OP_CUDA_MEMCPY_ASYNC + i % 3;
  e.ret = 0;
  e.bytes = 1u << 20;
  e.arg = 1;
  e.stream = 0x7f00;
  e.flags = IB_EVENT_HAS_RET | IB_EVENT_HAS_BYTES | IB_EVENT_HAS_ARG | IB_EVENT_HAS_STREAM;
  return e;
}

void BM_Ingest(benchmark::State& state) {
  const double rate = static_cast<double>(state.range(0));
  const uint64_t total = static_cast<uint64_t>(rate * options.seconds);
  uint64_t written = 0, dropped = 0, failed = 0, stored_during_offer = 0, peak_staged = 0;
  double offer_s = 0, drain_s = 0;
  for (auto _ : state) {
    state.PauseTiming();
    remove_db(options.db);
    auto writer = EventWriter::start(options.db, 1, kQueueCapacity);
    if (!writer) {
      state.SkipWithError(("cannot start the writer: " + writer.error().message).c_str());
      break;
    }
    state.ResumeTiming();
    uint64_t offered = 0;
    const auto start = Clock::now();
    while (offered < total) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      const uint64_t due = std::min<uint64_t>(total, static_cast<uint64_t>(elapsed * rate) + 1);
      for (; offered < due; ++offered) (*writer)->push(sample_event(offered));
      if (offered < total) std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    const auto offer_end = Clock::now();
    stored_during_offer = (*writer)->written();
    const ingero::Status finished = (*writer)->finish();
    const auto drained = Clock::now();
    if (!finished) {
      state.SkipWithError(("the writer failed: " + finished.error().message).c_str());
      break;
    }
    offer_s = std::chrono::duration<double>(offer_end - start).count();
    drain_s = std::chrono::duration<double>(drained - offer_end).count();
    written = (*writer)->written();
    dropped = (*writer)->dropped();
    failed = (*writer)->failed();
    peak_staged = (*writer)->peak_staged();
  }
  if (state.error_occurred()) return;
  state.SetItemsProcessed(static_cast<int64_t>(written));  // items_per_second: stored, offer + drain
  state.SetBytesProcessed(static_cast<int64_t>(written * sizeof(ingero::tracer::EventRecord)));
  state.counters["offered"] = static_cast<double>(total);
  state.counters["offered_per_s"] = total / offer_s;
  state.counters["written"] = static_cast<double>(written);
  state.counters["dropped"] = static_cast<double>(dropped);
  state.counters["failed"] = static_cast<double>(failed);
  state.counters["stored_while_offering_per_s"] = stored_during_offer / offer_s;
  state.counters["peak_staged"] = static_cast<double>(peak_staged);
  state.counters["drain_s"] = drain_s;
  state.SetLabel(dropped || failed ? "LOSS" : "zero loss");
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<ingero::bench::Flag> flags = {
      {"--seconds", [](const char* v) { options.seconds = atof(v); }},
      {"--db", [](const char* v) { options.db = v; }},
      {"--rates",
       [](const char* v) {
         options.rates.clear();
         std::stringstream list(v);
         for (std::string r; std::getline(list, r, ',');) options.rates.push_back(static_cast<int64_t>(atof(r.c_str())));
       }},
  };
  const auto valid = [] { return options.seconds > 0 && !options.rates.empty(); };
  if (int rc = ingero::bench::start(&argc, argv, flags, valid, "[--seconds S] [--rates R1,R2,...] [--db PATH]"))
    return rc;
  benchmark::AddCustomContext("queue_capacity_events", std::to_string(kQueueCapacity));
  benchmark::AddCustomContext("event_record_bytes", std::to_string(sizeof(ingero::tracer::EventRecord)));
  benchmark::AddCustomContext("sqlite_version", SQLITE_VERSION);
  benchmark::AddCustomContext("offer_seconds", std::to_string(options.seconds));
  benchmark::AddCustomContext("db", options.db);
  auto* b = benchmark::RegisterBenchmark("ingest", BM_Ingest);
  b->ArgName("offered_per_s")->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
  for (int64_t rate : options.rates) b->Arg(rate);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  remove_db(options.db);
  return 0;
}

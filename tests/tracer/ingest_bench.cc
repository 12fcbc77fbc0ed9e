// SPDX-License-Identifier: Apache-2.0
// Sustained ingest through the tracer's real writer path (bounded queue -> writer
// thread -> SQLite, batched transactions): events are offered at fixed rates from
// one producer thread, as the ring-buffer consumer would. Each rate reports what was
// written and dropped, how much was stored while offering, and how long the writer
// needed afterwards to move staged bursts into the indexed events table.
//
//   ingero_ingest_bench [--seconds S] [--rates R1,R2,...] [--db PATH]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tracer/event_writer.h"

using Clock = std::chrono::steady_clock;
using ingero::tracer::EventWriter;

namespace {

struct Options {
  double seconds = 5;
  std::vector<double> rates = {500e3, 1e6, 1.5e6, 2e6};
  std::string db = "/tmp/ingero-ingest-bench.db";
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--seconds")) o.seconds = atof(argv[i + 1]);
    if (!strcmp(argv[i], "--db")) o.db = argv[i + 1];
    if (!strcmp(argv[i], "--rates")) {
      o.rates.clear();
      std::stringstream list(argv[i + 1]);
      for (std::string r; std::getline(list, r, ',');) o.rates.push_back(atof(r.c_str()));
    }
  }
  return o;
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

int run_rate(const Options& o, double rate, int64_t run_id) {
  auto writer = EventWriter::start(o.db, run_id, 1u << 20);
  if (!writer) {
    fprintf(stderr, "%s\n", writer.error().message.c_str());
    return 1;
  }
  const uint64_t total = static_cast<uint64_t>(rate * o.seconds);
  uint64_t offered = 0;
  auto start = Clock::now();
  while (offered < total) {
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    uint64_t due = std::min<uint64_t>(total, static_cast<uint64_t>(elapsed * rate) + 1);
    for (; offered < due; ++offered) (*writer)->push(sample_event(offered));
    if (offered < total) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  auto offered_end = Clock::now();
  uint64_t stored_during_offer = (*writer)->written();
  ingero::Status finished = (*writer)->finish();
  auto drained = Clock::now();
  if (!finished) {
    fprintf(stderr, "%s\n", finished.error().message.c_str());
    return 1;
  }
  double offer_s = std::chrono::duration<double>(offered_end - start).count();
  double total_s = std::chrono::duration<double>(drained - start).count();
  uint64_t written = (*writer)->written(), dropped = (*writer)->dropped();
  printf("offered %9.0f ev/s for %.1f s: %s\n"
         "  offered %llu, written %llu, dropped %llu\n"
         "  stored while offering %llu (%.0f ev/s); most staged for indexing %llu\n"
         "  all rows in the indexed events table %.3f s after the offer ended (%.0f ev/s overall)\n",
         offered / offer_s, offer_s, dropped ? "LOSS" : "zero loss", (unsigned long long)offered,
         (unsigned long long)written, (unsigned long long)dropped, (unsigned long long)stored_during_offer,
         stored_during_offer / offer_s, (unsigned long long)(*writer)->peak_staged(), total_s - offer_s,
         written / total_s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::filesystem::remove(o.db);
  std::filesystem::remove(o.db + "-wal");
  std::filesystem::remove(o.db + "-shm");
  printf("ingest benchmark: queue capacity %u events of %zu bytes, SQLite %s, DB %s\n", 1u << 20,
         sizeof(ingero::tracer::EventRecord), SQLITE_VERSION, o.db.c_str());
  int64_t run_id = 1;
  for (double rate : o.rates)
    if (run_rate(o, rate, run_id++) != 0) return 1;
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// tracer::ObserverTail: a running job's observer files read as they grow, in the line formats
// tracer/observer/ingero_observer.py documents: only complete lines count (a line cut in the
// middle waits for the next poll), each DataLoader's knobs and overrides are kept, batch
// requests are in time order, and busiest() picks the loader the job iterated most.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracer/observer_records.h"

namespace ingero::tracer {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ObserverTailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ingero-observer-tail-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Appends text as it is (the observer writes one line per write(); a reader can still see a
  // line half-written, or the tail of a process killed mid-write).
  void append(const std::string& file, const std::string& text) const {
    std::ofstream out(dir_ / file, std::ios::app | std::ios::binary);
    out << text;
  }
  std::string dir() const { return dir_.string(); }
  fs::path dir_;
};

std::string process_line(int pid) {
  return json{{"type", "process"},   {"pid", pid},     {"parent_pid", 1},
              {"main_tid", pid},     {"python", "3.11.2"}, {"torch", "1.13.1"},
              {"argv", {"train.py"}}, {"observer_version", 1}}
             .dump() +
         "\n";
}

json knobs(int workers, bool persistent) {
  return {{"num_workers", workers},
          {"prefetch_factor", workers > 0 ? json(2) : json(nullptr)},
          {"pin_memory", false},
          {"persistent_workers", persistent},
          {"batch_size", 8},
          {"drop_last", false},
          {"timeout", 0},
          {"sampler", "SequentialSampler"},
          {"batch_sampler", "BatchSampler"},
          {"collate_fn", "torch.utils.data._utils.collate.default_collate"},
          {"worker_init_fn", nullptr},
          {"dataset", "__main__.CostlySamples"},
          {"multiprocessing_context", nullptr},
          {"pin_memory_device", ""}};
}

std::string loader_line(int pid, int loader, const json& knobs_seen, const json& applied,
                        const json& override_error = nullptr, const json& not_applicable = json::object()) {
  return json{{"type", "loader"},
              {"pid", pid},
              {"loader", loader},
              {"class", "torch.utils.data.dataloader.DataLoader"},
              {"ts_ns", 1000},
              {"knobs", knobs_seen},
              {"overrides_applied", applied},
              {"overrides_original", json::object()},
              {"overrides_not_applicable", not_applicable},
              {"override_error", override_error},
              {"init_error", nullptr}}
             .dump() +
         "\n";
}

std::string epoch_line(int pid, int loader, int epoch) {
  return json{{"type", "epoch"}, {"pid", pid},         {"loader", loader},    {"epoch", epoch},
              {"start_ns", 1500}, {"workers", json::array()}, {"pin_tid", nullptr}, {"reused", false}}
             .dump() +
         "\n";
}

// rows: [index, wait_start_ns, wait_ns] and, from observers that count them, the batch's tensor bytes
std::string batches_line(int pid, int loader, int tid, const json& rows, int epoch = 0) {
  return json{{"type", "batches"}, {"pid", pid}, {"loader", loader}, {"epoch", epoch}, {"tid", tid}, {"rows", rows}}
             .dump() +
         "\n";
}

std::vector<uint64_t> starts_of(const ObserverTail& tail, pid_t pid, int loader) {
  auto it = tail.loaders().find({pid, loader});
  return it == tail.loaders().end() ? std::vector<uint64_t>{} : it->second.batch_starts;
}

TEST_F(ObserverTailTest, OnlyCompleteLinesCountAndACutLineIsReadWhenItEnds) {
  const std::string file = "observer-4242.jsonl";
  const std::string cut = batches_line(4242, 1, 4242, json{{0, 5000, 7}, {1, 5100, 7}, {2, 5200, 7}});
  const size_t half = cut.find("5100");  // inside the rows array: neither half is valid JSON
  ASSERT_NE(half, std::string::npos);

  append(file, process_line(4242) + loader_line(4242, 0, knobs(2, true), {{"num_workers", 2}}) +
                   epoch_line(4242, 0, 0) + batches_line(4242, 0, 4242, json{{0, 1000, 10}, {1, 2000, 10}, {2, 3000, 10}}) +
                   loader_line(4242, 1, knobs(0, false), json::object()) +
                   batches_line(4242, 1, 4242, json{{0, 4000, 5}}) + cut.substr(0, half));
  ObserverTail tail(dir());
  tail.poll();
  ASSERT_EQ(tail.loaders().size(), 2u);
  EXPECT_EQ(starts_of(tail, 4242, 0), (std::vector<uint64_t>{1000, 2000, 3000}));
  EXPECT_EQ(starts_of(tail, 4242, 1), (std::vector<uint64_t>{4000})) << "the half-written line was read";

  // Polling again before the line ends reads nothing new, and nothing twice.
  tail.poll();
  EXPECT_EQ(starts_of(tail, 4242, 0).size(), 3u);
  EXPECT_EQ(starts_of(tail, 4242, 1).size(), 1u);

  // The rest of the line, then more of both loaders: loader 1 overtakes loader 0.
  append(file, cut.substr(half) + batches_line(4242, 0, 4242, json{{3, 6000, 10}}) +
                   batches_line(4242, 1, 4242, json{{3, 6100, 5}, {4, 6200, 5}}));
  tail.poll();
  EXPECT_EQ(starts_of(tail, 4242, 0), (std::vector<uint64_t>{1000, 2000, 3000, 6000}));
  EXPECT_EQ(starts_of(tail, 4242, 1), (std::vector<uint64_t>{4000, 5000, 5100, 5200, 6100, 6200}));
  const LiveLoader* busiest = tail.busiest();
  ASSERT_NE(busiest, nullptr);
  EXPECT_EQ(busiest->loader, 1);
  EXPECT_EQ(busiest->pid, 4242);
  const LiveLoader* first = tail.busiest(0);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->loader, 0);
  EXPECT_EQ(first->batch_starts.size(), 4u);
  EXPECT_EQ(tail.busiest(7), nullptr) << "no loader has index 7";
}

// A row's fourth field, the batch's tensor bytes, becomes its batch_wait event's bytes; rows without
// it (older observers) or with null (a batch with no tensor) have none.
TEST_F(ObserverTailTest, TheBatchBytesReachTheBatchWaitEvents) {
  append("observer-4242.jsonl", process_line(4242) + loader_line(4242, 0, knobs(2, false), json::object()) +
                                    epoch_line(4242, 0, 0) +
                                    batches_line(4242, 0, 4242,
                                                 json{{0, 1000, 10, nullptr, 8 << 20}, {1, 2000, 10, nullptr, nullptr}, {2, 3000, 10}}));
  const ObservedJob job = read_observed_job(dir(), {});
  std::vector<std::optional<int64_t>> bytes;
  for (const WorkloadEvent& e : job.events)
    if (e.op == "batch_wait") bytes.push_back(e.bytes);
  ASSERT_EQ(bytes.size(), 3u);
  EXPECT_EQ(bytes[0], 8 << 20);
  EXPECT_FALSE(bytes[1]);
  EXPECT_FALSE(bytes[2]);
}

TEST_F(ObserverTailTest, LoaderLinesGiveKnobsOverridesAndTheOverrideError) {
  append("observer-100.jsonl",
         process_line(100) + loader_line(100, 0, knobs(4, true), {{"num_workers", 4}, {"persistent_workers", true}},
                                         nullptr, {{"prefetch_factor", "needs workers"}}));
  append("observer-200.jsonl",
         process_line(200) + loader_line(200, 0, knobs(0, false), json::object(),
                                         "unknown override key 'num_workerz'"));
  ObserverTail tail(dir());
  tail.poll();
  ASSERT_EQ(tail.loaders().size(), 2u);
  const LiveLoader& a = tail.loaders().at({100, 0});
  EXPECT_EQ(a.pid, 100);
  EXPECT_EQ(a.loader, 0);
  EXPECT_EQ(a.knobs["num_workers"], 4);
  EXPECT_EQ(a.knobs["persistent_workers"], true);
  EXPECT_EQ(a.knobs["dataset"], "__main__.CostlySamples");
  EXPECT_EQ(a.overrides_applied, (json{{"num_workers", 4}, {"persistent_workers", true}}));
  EXPECT_TRUE(a.overrides_not_applicable.contains("prefetch_factor"));
  EXPECT_EQ(a.override_error, "") << "a null override_error is no error";
  EXPECT_TRUE(a.batch_starts.empty());
  const LiveLoader& b = tail.loaders().at({200, 0});
  EXPECT_EQ(b.knobs["num_workers"], 0);
  EXPECT_TRUE(b.overrides_applied.empty());
  EXPECT_EQ(b.override_error, "unknown override key 'num_workerz'");
  // Neither loader has asked for a batch: the busiest is one of them, with none.
  const LiveLoader* busiest = tail.busiest();
  ASSERT_NE(busiest, nullptr);
  EXPECT_TRUE(busiest->batch_starts.empty());
}

TEST_F(ObserverTailTest, BatchStartsAreInTimeOrderAcrossThreadsAndEpochs) {
  const std::string file = "observer-7.jsonl";
  append(file, process_line(7) + loader_line(7, 0, knobs(2, false), json::object()) + epoch_line(7, 0, 0) +
                   batches_line(7, 0, 7, json{{0, 100, 1}, {1, 200, 1}, {2, 300, 1}}) +
                   // another thread iterating the same loader, its rows flushed later but earlier in time
                   batches_line(7, 0, 8, json{{0, 150, 1}, {1, 250, 1}}));
  ObserverTail tail(dir());
  tail.poll();
  EXPECT_EQ(starts_of(tail, 7, 0), (std::vector<uint64_t>{100, 150, 200, 250, 300}));
  // The next epoch's requests follow on.
  append(file, epoch_line(7, 0, 1) + batches_line(7, 0, 7, json{{0, 400, 1}, {1, 500, 1}}, 1));
  tail.poll();
  EXPECT_EQ(starts_of(tail, 7, 0), (std::vector<uint64_t>{100, 150, 200, 250, 300, 400, 500}));
}

TEST_F(ObserverTailTest, TheBusiestLoaderIsAcrossProcessesAndTheIndexFilterHoldsToIt) {
  // Process 10 builds loaders 0 (3 batches) and 1 (1 batch); process 11 (a fork of it) iterates its
  // loader 1 most (5 batches). Loader index 0: process 10's.
  append("observer-10.jsonl", process_line(10) + loader_line(10, 0, knobs(0, false), json::object()) +
                                  batches_line(10, 0, 10, json{{0, 1, 1}, {1, 2, 1}, {2, 3, 1}}) +
                                  loader_line(10, 1, knobs(0, false), json::object()) +
                                  batches_line(10, 1, 10, json{{0, 4, 1}}));
  append("observer-11.jsonl", process_line(11) + loader_line(11, 1, knobs(0, false), json::object()) +
                                  batches_line(11, 1, 11, json{{0, 5, 1}, {1, 6, 1}, {2, 7, 1}, {3, 8, 1}, {4, 9, 1}}));
  ObserverTail tail(dir());
  tail.poll();
  ASSERT_EQ(tail.loaders().size(), 3u);
  const LiveLoader* any = tail.busiest();
  ASSERT_NE(any, nullptr);
  EXPECT_EQ(any->pid, 11);
  EXPECT_EQ(any->loader, 1);
  const LiveLoader* zero = tail.busiest(0);
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->pid, 10);
  EXPECT_EQ(zero->loader, 0);
  EXPECT_EQ(zero->batch_starts.size(), 3u);
  const LiveLoader* one = tail.busiest(1);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->pid, 11);
}

TEST_F(ObserverTailTest, OtherFilesOtherLinesAndAMissingFolderAreIgnored) {
  // Not observer files: a log, a temporary name, another extension.
  append("train.log", batches_line(5, 0, 5, json{{0, 1, 1}}));
  append("observer-5.jsonl.tmp", batches_line(5, 0, 5, json{{0, 1, 1}}));
  append("observer-5.txt", batches_line(5, 0, 5, json{{0, 1, 1}}));
  // An observer file of a worker (no loader, no batches) and one with a malformed line in the middle.
  append("observer-6.jsonl", process_line(6) +
                                 R"({"type":"worker_ready","pid":6,"worker_id":0,"ready_ns":10,"parent_pid":5})" "\n" +
                                 R"({"type":"summary","pid":6,"ts_ns":20,"batches":0,"dropped":0,"errors":0,"error_sample":null,"override_error":null})" "\n");
  append("observer-5.jsonl", process_line(5) + loader_line(5, 0, knobs(0, false), json::object()) +
                                 "{\"type\":\"batches\",\"pid\":5,\"rows\":[[0,\n" +
                                 batches_line(5, 0, 5, json{{0, 100, 1}, {1, 200, 1}}) +
                                 R"({"type":"epoch_end","pid":5,"loader":0,"epoch":0,"ts_ns":300})" "\n");
  ObserverTail tail(dir());
  tail.poll();
  ASSERT_EQ(tail.loaders().size(), 1u);
  EXPECT_EQ(starts_of(tail, 5, 0), (std::vector<uint64_t>{100, 200}));

  ObserverTail nowhere((dir_ / "missing").string());
  nowhere.poll();
  EXPECT_TRUE(nowhere.loaders().empty());
  EXPECT_EQ(nowhere.busiest(), nullptr);
  // The folder appears later (the job's first DataLoader): the next poll reads it.
  fs::create_directories(dir_ / "missing");
  std::ofstream(dir_ / "missing" / "observer-9.jsonl")
      << process_line(9) << loader_line(9, 0, knobs(0, false), json::object())
      << batches_line(9, 0, 9, json{{0, 1, 1}});
  nowhere.poll();
  ASSERT_NE(nowhere.busiest(), nullptr);
  EXPECT_EQ(nowhere.busiest()->pid, 9);
}


// The batches name the stack that asked for them (a stack line per process, written once): each
// batch_wait gets those Python frames, interned into the profile beside its samples' frames.
TEST_F(ObserverTailTest, BatchWaitsCarryTheStackThatAskedForThem) {
  const json frames = {{"train_one_epoch", "/job/train.py", 57}, {"main", "/job/train.py", 90},
                       {"<module>", "/job/train.py", 99}};
  append("observer-5.jsonl",
         process_line(5) + loader_line(5, 0, knobs(0, false), json::object()) + epoch_line(5, 0, 0) +
             json{{"type", "stack"}, {"pid", 5}, {"id", 0}, {"frames", frames}}.dump() + "\n" +
             batches_line(5, 0, 5, json{{0, 100, 10, 0}, {1, 200, 10, nullptr}, {2, 300, 10, 7}, {3, 400, 10}}));
  // Another process's stack 0 is its own.
  append("observer-6.jsonl", process_line(6) + loader_line(6, 0, knobs(0, false), json::object()) +
                                 epoch_line(6, 0, 0) +
                                 json{{"type", "stack"}, {"pid", 6}, {"id", 0}, {"frames", {{"other", "/o.py", 1}}}}.dump() +
                                 "\n" + batches_line(6, 0, 6, json{{0, 150, 10, 0}}));
  ObservedJob job = read_observed_job(dir(), {});
  ASSERT_EQ(job.stacks.size(), 2u);  // the rows naming no stack, or one never written, carry none
  const FramedEventStack& first = job.stacks[0].tid == 5 ? job.stacks[0] : job.stacks[1];
  EXPECT_EQ(first.ts_ns, 100u);
  EXPECT_EQ(first.op, IB_OP_BATCH_WAIT);
  ASSERT_EQ(first.frames.size(), 3u);
  EXPECT_EQ(first.frames[0].name, "train_one_epoch");
  EXPECT_EQ(first.frames[0].file, "/job/train.py");
  EXPECT_EQ(first.frames[0].line, 57);
  EXPECT_EQ(first.frames[0].kind, kFrameKindPython);
  EXPECT_EQ(first.frames[0].line_kind, kLineExecuting);

  // Into a profile that has a frame already: it is reused, the stack's nodes are added.
  CpuProfile profile;
  profile.frames.push_back({kFrameKindPython, "<module>", "/job/train.py", 99, kLineExecuting});
  profile.stacks.push_back({std::nullopt, 1});
  add_event_stacks(profile, job.stacks);
  EXPECT_EQ(profile.frames.size(), 4u);  // <module>, main, train_one_epoch, other
  ASSERT_EQ(profile.event_stacks.size(), 2u);
  // Walking from the batch's stack lists its frames innermost first, down to the shared root.
  std::vector<std::string> walked;
  for (std::optional<int64_t> id = profile.event_stacks[job.stacks[0].tid == 5 ? 0 : 1].stack_id; id;
       id = profile.stacks[*id - 1].parent_id)
    walked.push_back(profile.frames[profile.stacks[*id - 1].frame_id - 1].name);
  EXPECT_EQ(walked, (std::vector<std::string>{"train_one_epoch", "main", "<module>"}));
  EXPECT_EQ(profile.stacks[0].parent_id, std::nullopt);
  EXPECT_EQ(profile.stacks.size(), 4u);  // <module>, main, train_one_epoch; other
}


// A file of an observer version this reader does not know is left out, and said, by both readers; the
// other files are read as ever.
TEST_F(ObserverTailTest, AnUnknownObserverVersionIsSaidAndItsRecordsLeftOut) {
  json future = json::parse(process_line(8));
  future["observer_version"] = 2;
  append("observer-8.jsonl", future.dump() + "\n" + loader_line(8, 0, knobs(0, false), json::object()) +
                                 epoch_line(8, 0, 0) + batches_line(8, 0, 8, json{{0, 100, 10}, {1, 200, 10}}));
  append("observer-9.jsonl", process_line(9) + loader_line(9, 0, knobs(0, false), json::object()) +
                                 epoch_line(9, 0, 0) + batches_line(9, 0, 9, json{{0, 100, 10}}));
  const ObservedJob job = read_observed_job(dir(), {});
  EXPECT_EQ(job.batches, 1);
  ASSERT_EQ(job.loaders.size(), 1u);
  EXPECT_EQ(job.loaders[0].pid, 9);
  ASSERT_EQ(job.notes.size(), 1u);
  EXPECT_EQ(job.notes[0], "observer-8.jsonl was written by observer version 2, which this ingero-bench does not read "
                          "(it reads version 1): its records are left out");
  ObserverTail tail(dir());
  tail.poll();
  ASSERT_EQ(tail.loaders().size(), 1u);
  EXPECT_EQ(tail.loaders().begin()->second.pid, 9);
  EXPECT_FALSE(tail.roles().trainers.count(8));
}


// Both readers read a line alike (one parser): the same rows are batches for both, a row without its
// index, start and wait for neither.
TEST_F(ObserverTailTest, TheFinishedAndTheRunningJobsReadersTakeTheSameRows) {
  append("observer-5.jsonl", process_line(5) + loader_line(5, 0, knobs(0, false), json::object()) +
                                 epoch_line(5, 0, 0) +
                                 batches_line(5, 0, 5, json{{0, 100, 10}, {1, 200}, {2, 300, 10, 0}, {"x", 400, 10}}));
  const ObservedJob job = read_observed_job(dir(), {});
  ObserverTail tail(dir());
  tail.poll();
  ASSERT_EQ(tail.loaders().size(), 1u);
  EXPECT_EQ(job.batches, 2);
  EXPECT_EQ(tail.loaders().begin()->second.batch_starts, (std::vector<uint64_t>{100, 300}));
  EXPECT_EQ(tail.loaders().begin()->second.wait_ns, 20u);
}

}  // namespace
}  // namespace ingero::tracer

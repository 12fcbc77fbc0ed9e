// SPDX-License-Identifier: Apache-2.0
// CPU profiles read and analysed: shares per role and rank, the main thread's split, the causes'
// frames, the verdict compute-bound on the CPU, the changes that follow from frames, and a run
// without a profile left as it was.
#include <gtest/gtest.h>

#include <algorithm>

#include "reports/analysis/change_checks.h"
#include "reports/analysis/profile_causes.h"
#include "reports/analysis/run_analysis.h"
#include "reports/text/chain_text.h"
#include "reports/render/report_json.h"
#include "reports/text/profile_text.h"
#include "tests/reports/analyzed.h"
#include "tests/reports/profile_scenario.h"
#include "tests/reports/scenario.h"

namespace ingero::reports::testing {
namespace {

using namespace frames;

const FrameShare* find_frame(const RoleProfile& role, const std::string& name) {
  for (const FrameShare& f : role.frames)
    if (f.name == name) return &f;
  return nullptr;
}

// The main thread: 60 samples in a convolution under the model's forward, 30 in collate's torch.cat
// under the DataLoader, 10 in the loop's own logging. A worker: 41 in libjpeg under PIL, 22 in
// ToTensor, 37 in the dataset's __getitem__ itself.
void add_hand_built_profile(TraceFixture& db, int64_t run) {
  db.add_event(run, "offcpu_blocked", kMs, kMs, kMain, kMain);  // a run needs an event to be read
  ProfileBuilder p(db, run);
  p.add(kMain, {module(), train(), forward(), conv()}, 60, 10 * kMs);
  p.add(kMain, {module(), train(), next_batch(), fetch(), collate(), at_cat()}, 20, 10 * kMs);
  p.add(kMain, {module(), train(), next_batch(), fetch(), collate(), at_cat()}, 10, 150 * kMs);  // another bucket
  p.add(kMain, {module(), train(), log_step()}, 10, 10 * kMs);
  p.add(kWorkerA, {worker_loop(), fetch(), getitem(), pil_load(), jpeg_decode()}, 41, 10 * kMs);
  p.add(kWorkerA, {worker_loop(), fetch(), getitem(), to_tensor()}, 22, 10 * kMs);
  p.add(kWorkerB, {worker_loop(), fetch(), getitem()}, 37, 10 * kMs);
}

TEST(Profile, SharesPerRoleAreExactOnAHandBuiltProfile) {
  const std::string path = temp_db_path("profile-shares");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 500 * kMs);
    add_hand_built_profile(*db, run);
  }
  const RunAnalysis a = analyze_path(path);
  ASSERT_TRUE(a.profile);
  EXPECT_TRUE(a.profile_taken);
  EXPECT_EQ(a.profile->hz, 99);
  EXPECT_EQ(a.profile->samples, 200);
  ASSERT_EQ(a.profile->roles.size(), 2u);
  const RoleProfile& main = a.profile->roles[0];
  EXPECT_EQ(main.role, "main");
  EXPECT_EQ(main.samples, 100);
  EXPECT_EQ(main.threads, 1);
  ASSERT_FALSE(main.frames.empty());
  EXPECT_EQ(main.frames[0].name, "at::native::_convolution");  // most self samples first
  EXPECT_EQ(main.frames[0].self_samples, 60);
  EXPECT_DOUBLE_EQ(main.frames[0].self_share, 0.60);
  const FrameShare* collate_share = find_frame(main, "default_collate");
  ASSERT_NE(collate_share, nullptr);
  EXPECT_EQ(collate_share->self_samples, 0);
  EXPECT_EQ(collate_share->inclusive_samples, 30);  // both buckets
  EXPECT_DOUBLE_EQ(collate_share->inclusive_share, 0.30);
  const FrameShare* root = find_frame(main, "<module>");
  ASSERT_NE(root, nullptr);
  EXPECT_DOUBLE_EQ(root->inclusive_share, 1.0);
  EXPECT_EQ(main.top_by_inclusive(1).front().name, "<module>");
  EXPECT_EQ(main.top_by_self(10).size(), 3u) << "only functions with self samples";

  const RoleProfile& workers = a.profile->roles[1];
  EXPECT_EQ(workers.role, "worker");
  EXPECT_EQ(workers.samples, 100);
  EXPECT_EQ(workers.threads, 2);
  const auto top = workers.top_by_self(3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].name, "decode_mcu");
  EXPECT_DOUBLE_EQ(top[0].self_share, 0.41);
  EXPECT_EQ(top[1].name, "ImageFolder.__getitem__");
  EXPECT_DOUBLE_EQ(top[1].self_share, 0.37);
  EXPECT_DOUBLE_EQ(top[1].inclusive_share, 1.0);
  EXPECT_EQ(top[2].name, "ToTensor.__call__");
  EXPECT_DOUBLE_EQ(top[2].self_share, 0.22);
  EXPECT_DOUBLE_EQ(workers.evidence.decode, 0.41);
  EXPECT_EQ(frame_shares_text(top), "41.0 % decode_mcu [libjpeg.so.62.3.0], 37.0 % ImageFolder.__getitem__ "
                                    "(datasets/folder.py:229), 22.0 % ToTensor.__call__ (transforms/transforms.py:134)");
}

TEST(Profile, TheMainThreadSplitsIntoBatchBuildingTheModelAndTheRest) {
  const std::string path = temp_db_path("profile-split");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_loader_run(*db, 500 * kMs);
    add_hand_built_profile(*db, run);
  }
  const RunAnalysis a = analyze_path(path);
  ASSERT_TRUE(a.profile);
  const auto split = a.profile->main_split();
  ASSERT_TRUE(split);
  EXPECT_EQ(split->model, 60);
  EXPECT_EQ(split->loader, 30) << "collate's torch op is batch building, not the model";
  EXPECT_EQ(split->other, 10);
  EXPECT_EQ(split->largest(), CpuPart::model);
  EXPECT_FALSE(a.profile->roles[1].split) << "only the main thread is split";
}

TEST(Profile, FramesAreClassifiedByTheDocumentedRules) {
  EXPECT_EQ(classify_frame(next_batch()), CpuPart::loader);
  EXPECT_EQ(classify_frame(getitem()), CpuPart::loader);
  EXPECT_EQ(classify_frame(py("MyDataset.__getitems__", "/home/u/data.py", 3)), CpuPart::loader);
  EXPECT_EQ(classify_frame(py("my_collate_fn", "/home/u/data.py", 9)), CpuPart::loader);
  EXPECT_EQ(classify_frame(to_tensor()), CpuPart::loader);
  EXPECT_EQ(classify_frame(pil_load()), CpuPart::loader);
  EXPECT_EQ(classify_frame(jpeg_decode()), CpuPart::loader);
  EXPECT_EQ(classify_frame(forward()), CpuPart::model);
  EXPECT_EQ(classify_frame(py("Net.forward", "/home/u/model.py", 20)), CpuPart::model);
  EXPECT_EQ(classify_frame(backward()), CpuPart::model);
  EXPECT_EQ(classify_frame(py("SGD.step", kTorch + "/optim/sgd.py", 70)), CpuPart::model);
  EXPECT_EQ(classify_frame(conv()), CpuPart::model);
  EXPECT_EQ(classify_frame(native("mkl_blas_avx2_sgemm", "/usr/lib/libmkl_core.so")), CpuPart::model);
  EXPECT_EQ(classify_frame(log_step()), CpuPart::other);
  EXPECT_EQ(classify_frame(memcpy_frame()), CpuPart::other);
  EXPECT_EQ(classify_frame(page_fault()), CpuPart::other);
  const ProfileFrame a = collate(), b = at_cat(), c = train();
  EXPECT_EQ(classify_stack({&b, &a, &c}), CpuPart::loader) << "loader code anywhere decides";
  const ProfileFrame d = conv(), e = forward();
  EXPECT_EQ(classify_stack({&d, &e, &c}), CpuPart::model);
  EXPECT_EQ(classify_stack({&c}), CpuPart::other);
}

TEST(Profile, RanksAreProfiledApart) {
  const std::string path = temp_db_path("profile-ranks");
  {
    auto db = TraceFixture::create(path);
    RunSpec spec;
    spec.end_ns = 500 * kMs;
    const int64_t run = db->add_run(spec);
    db->add_thread(run, {kMain, kMain, 1, "python3", "main", 0, 500 * kMs, 0, std::nullopt});
    db->add_thread(run, {kMain + 1, kMain + 1, 1, "python3", "main", 0, 500 * kMs, 1, std::nullopt});
    db->add_event(run, "offcpu_blocked", kMs, kMs, kMain, kMain);
    ProfileBuilder p(*db, run);
    p.add(kMain, {module(), train(), forward(), conv()}, 30);
    p.add(kMain + 1, {module(), train(), log_step()}, 10);
  }
  const RunAnalysis a = analyze_path(path);
  ASSERT_TRUE(a.profile);
  ASSERT_EQ(a.profile->roles.size(), 1u);
  EXPECT_EQ(a.profile->roles[0].samples, 40);
  ASSERT_EQ(a.profile->ranks.size(), 2u);
  EXPECT_EQ(a.profile->ranks[0].rank, 0);
  EXPECT_EQ(a.profile->ranks[0].samples, 30);
  EXPECT_EQ(a.profile->ranks[0].split->model, 30);
  EXPECT_EQ(a.profile->ranks[1].rank, 1);
  EXPECT_DOUBLE_EQ(a.profile->ranks[1].frames[0].self_share, 1.0);
  EXPECT_EQ(role_profile_name(a.profile->ranks[1]), "main (rank 1)");
}

// A user's job (trace -- CMD) with no DataLoader worker, its main thread on the CPU 90 % of the run
// outside CUDA calls, and no batch timings: host-bound by its kernel totals.
int64_t add_cpu_job(TraceFixture& db, int64_t length) {
  RunSpec spec;
  spec.label = "python3 main.py --dummy";
  spec.kind = std::string(contract::kind::kCommand);
  spec.end_ns = length;
  const int64_t run = db.add_run(spec);
  db.add_thread(run, {kMain, kMain, 1, "python3", "main", 0, length, std::nullopt, std::nullopt});
  ThreadStatsRecord stats{kMain, kMain, {}};
  stats.counters.oncpu_ns = length * 9 / 10;
  stats.counters.offcpu_ns = length / 10;
  db.add_thread_stats(run, stats);
  db.add_event(run, "offcpu_blocked", kMs, kMs, kMain, kMain);
  return run;
}

const CausalChain* host_chain(const RunAnalysis& a) {
  for (const CausalChain& c : a.chains.chains)
    if (c.victim == kMainBusyVictim) return &c;
  return nullptr;
}

TEST(Profile, AJobWithoutAProfileIsAnalysedAsBeforeAndSaysSo) {
  const std::string path = temp_db_path("profile-none");
  {
    auto db = TraceFixture::create(path);
    add_cpu_job(*db, 1000 * kMs);
  }
  const RunAnalysis a = analyze_path(path);
  EXPECT_FALSE(a.profile);
  EXPECT_FALSE(a.profile_taken);
  EXPECT_EQ(a.metrics.verdict, InputBound::host_bound);
  const CausalChain* chain = host_chain(a);
  ASSERT_NE(chain, nullptr);
  EXPECT_TRUE(chain->frames.empty());
  ASSERT_EQ(chain->changes.size(), 1u) << "as today: the loop's batch building moved to a worker";
  EXPECT_EQ(chain->changes[0].knob, "num_workers");
  for (const std::string& line : words_of(a, *chain).timeline) EXPECT_EQ(line.find("[PROFILE]"), std::string::npos);
  EXPECT_EQ(profile_status_text(a.profile, a.profile_taken),
            "CPU profile: none taken (profiling was off, or the file predates profiles)");
}

TEST(Profile, ACpuTrainingJobIsComputeBoundAndToldNoLoaderChange) {
  const std::string path = temp_db_path("profile-cpu-training");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_cpu_job(*db, 1000 * kMs);
    ProfileBuilder p(*db, run);
    p.add(kMain, {module(), train(), forward(), conv()}, 55);
    p.add(kMain, {module(), train(), backward(), autograd()}, 30);
    p.add(kMain, {module(), train(), next_batch(), fetch(), collate(), at_cat()}, 7);
    p.add(kMain, {module(), train(), log_step()}, 8);
  }
  const RunAnalysis a = analyze_path(path);
  ASSERT_TRUE(a.profile);
  EXPECT_EQ(a.metrics.verdict, InputBound::cpu_compute_bound);
  const CausalChain* chain = host_chain(a);
  ASSERT_NE(chain, nullptr);
  EXPECT_TRUE(chain->changes.empty()) << "a CPU-training job is not told to add workers";
  for (const CausalChain& c : a.chains.chains)
    for (const Change& change : c.changes) EXPECT_NE(change.knob, "num_workers") << c.cause.code();
  ASSERT_TRUE(chain->split);
  EXPECT_DOUBLE_EQ(chain->split->share(CpuPart::model), 0.85);
  ASSERT_EQ(chain->frames.size(), 3u);
  EXPECT_EQ(chain->frames[0].name, "at::native::_convolution");
  const ChainWords words = words_of(a, *chain);
  EXPECT_EQ(words.recommendation.rfind("None for the loader", 0), 0u) << words.recommendation;
  EXPECT_NE(words.root_cause.find("compute-bound on the CPU"), std::string::npos) << words.root_cause;
  const bool profile_line = std::any_of(words.timeline.begin(), words.timeline.end(), [](const std::string& l) {
    return l.rfind("[PROFILE] main thread computing the model on the CPU: 55.0 % at::native::_convolution", 0) == 0;
  });
  EXPECT_TRUE(profile_line);
  EXPECT_NE(std::string(input_bound_name(a.metrics.verdict)).find("compute-bound on the CPU"), std::string::npos);
}

// The same main thread in a job that launches CUDA kernels: the model's frames are the host's side of
// GPU work (launches, syncs), not compute on the CPU; the run stays host-bound (seen on an H200: a model
// on the GPU was said to compute on the CPU).
TEST(Profile, AGpuJobsModelFramesKeepItHostBound) {
  const std::string path = temp_db_path("profile-gpu-model");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_cpu_job(*db, 1000 * kMs);
    db->add_event(run, "cuLaunchKernel", 2 * kMs, 10'000, kMain, kMain);
    ProfileBuilder p(*db, run);
    p.add(kMain, {module(), train(), forward(), conv()}, 55);
    p.add(kMain, {module(), train(), backward(), autograd()}, 30);
    p.add(kMain, {module(), train(), log_step()}, 15);
  }
  const RunAnalysis a = analyze_path(path);
  ASSERT_TRUE(a.profile);
  EXPECT_EQ(a.metrics.verdict, InputBound::host_bound);
  EXPECT_EQ(std::string(input_bound_name(a.metrics.verdict)).find("compute-bound on the CPU"), std::string::npos);
}

TEST(Profile, AJobBuildingBatchesInItsLoopKeepsTheWorkerAdviceAndGetsTheDecoderChange) {
  const std::string path = temp_db_path("profile-main-decode");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_cpu_job(*db, 1000 * kMs);
    ProfileBuilder p(*db, run);
    p.add(kMain, {module(), train(), next_batch(), fetch(), getitem(), pil_load(), jpeg_decode()}, 50);
    p.add(kMain, {module(), train(), next_batch(), fetch(), getitem(), to_tensor()}, 20);
    p.add(kMain, {module(), train(), forward(), conv()}, 20);
    p.add(kMain, {module(), train(), sampler_iter(), randperm()}, 10);
  }
  const RunAnalysis a = analyze_path(path);
  EXPECT_EQ(a.metrics.verdict, InputBound::host_bound);
  const CausalChain* chain = host_chain(a);
  ASSERT_NE(chain, nullptr);
  std::vector<std::string> knobs;
  for (const Change& c : chain->changes) knobs.push_back(c.knob + "=" + c.value);
  EXPECT_EQ(knobs, (std::vector<std::string>{"num_workers=3", "decoder=torchvision.io.decode_jpeg",
                                             "sampler=pre-shuffled"}));
  ASSERT_EQ(chain->split->loader, 80) << "the sampler's randperm is the DataLoader's own code";
  ASSERT_EQ(chain->checks.size(), 0u) << "explain fills the checks";
  RunRecord run = a.context.run;
  std::vector<CausalChain> chains = {*chain};
  check_changes(chains, run, {run}, "/tmp/t.db");
  ASSERT_EQ(chains[0].checks.size(), 3u);
  EXPECT_FALSE(chains[0].checks[1].run_id) << "unmeasured";
  EXPECT_NE(chains[0].checks[1].command.find("torchvision.io.decode_jpeg"), std::string::npos)
      << chains[0].checks[1].command;
  EXPECT_NE(chains[0].checks[1].command.find("ingero-bench trace --db /tmp/t.db"), std::string::npos);
  const ChainWords words = words_of(a, *chain);
  EXPECT_NE(words.recommendation.find("Image decoding dominates"), std::string::npos) << words.recommendation;
  EXPECT_NE(words.recommendation.find("torch.randperm"), std::string::npos) << words.recommendation;
}

// A user's job whose loop waits for batches from two workers busy on the CPU.
TEST(Profile, WorkersOnCpuCarryTheirTopFramesAndTheCollateChange) {
  const std::string path = temp_db_path("profile-workers");
  {
    auto db = TraceFixture::create(path);
    RunSpec spec;
    spec.kind = std::string(contract::kind::kCommand);
    spec.end_ns = 500 * kMs;
    const int64_t run = db->add_run(spec);
    db->add_thread(run, {kMain, kMain, 1, "python3", "main", 0, 500 * kMs, std::nullopt, std::nullopt});
    db->add_thread(run, {kWorkerA, kWorkerA, kMain, "pt_data_worker", "worker", 0, 500 * kMs, std::nullopt, std::nullopt});
    db->add_thread(run, {kWorkerB, kWorkerB, kMain, "pt_data_worker", "worker", 0, 500 * kMs, std::nullopt, std::nullopt});
    db->set_setting(run, std::string(contract::kBatchSourceSetting), std::string(contract::kBatchSourceObserver));
    db->begin();
    for (int b = 0; b < 20; ++b) {
      const int64_t start = 10 * kMs + b * 20 * kMs;
      db->add_event(run, "batch_wait", start, 10 * kMs, kMain, kMain, std::nullopt, b);
      db->add_event(run, "offcpu_blocked", start, 10 * kMs, kMain, kMain);
      db->add_event(run, "batch_compute", start + 10 * kMs, 10 * kMs, kMain, kMain, std::nullopt, b);
    }
    db->commit();
    ProfileBuilder p(*db, run);
    p.add(kWorkerA, {worker_loop(), fetch(), collate(), at_cat()}, 40);
    p.add(kWorkerB, {worker_loop(), fetch(), getitem(), to_tensor()}, 60);
    p.add(kMain, {module(), train(), forward(), conv()}, 50);
  }
  const RunAnalysis a = analyze_path(path);
  const CausalChain* workers = nullptr;
  for (const CausalChain& c : a.chains.chains)
    if (c.cause.code() == "worker.on_cpu") workers = &c;
  ASSERT_NE(workers, nullptr);
  ASSERT_EQ(workers->frames.size(), 2u);
  EXPECT_EQ(workers->frames[0].name, "ToTensor.__call__");
  EXPECT_DOUBLE_EQ(workers->frames[0].self_share, 0.60);
  EXPECT_EQ(workers->profile_samples, 100);
  EXPECT_FALSE(workers->split) << "the main thread's split belongs to its own chains";
  const bool batched = std::any_of(workers->changes.begin(), workers->changes.end(),
                                   [](const Change& c) { return c.knob == "sampling" && c.value == "batched"; });
  EXPECT_TRUE(batched) << "collate is 40 % of the workers' samples";
  const ChainWords words = words_of(a, *workers);
  const bool line = std::any_of(words.timeline.begin(), words.timeline.end(), [](const std::string& l) {
    return l.find("[PROFILE] workers on CPU (per-sample fetch and collate): 60.0 % ToTensor.__call__") == 0;
  });
  EXPECT_TRUE(line) << words.timeline.back();
}


// The batch waits carry the Python frames that asked for them (the observer's stacks): the chain of
// the waits names the user's line most of them were made at, in its words and its JSON.
TEST(Profile, SlowWaitsNameTheUsersLineThatMadeThem) {
  const std::string path = temp_db_path("profile-wait-sites");
  const ProfileFrame epoch_line = py("train_one_epoch", "/home/u/train.py", 57);
  const ProfileFrame validate = py("validate", "/home/u/train.py", 80);
  const ProfileFrame main_frame = py("main", "/home/u/train.py", 99);
  {
    auto db = TraceFixture::create(path);
    RunSpec spec;
    spec.kind = std::string(contract::kind::kCommand);
    spec.end_ns = 500 * kMs;
    const int64_t run = db->add_run(spec);
    db->add_thread(run, {kMain, kMain, 1, "python3", "main", 0, 500 * kMs, std::nullopt, std::nullopt});
    db->add_thread(run, {kWorkerA, kWorkerA, kMain, "pt_data_worker", "worker", 0, 500 * kMs, std::nullopt, std::nullopt});
    db->set_setting(run, std::string(contract::kBatchSourceSetting), std::string(contract::kBatchSourceObserver));
    db->begin();
    for (int b = 0; b < 20; ++b) {
      const int64_t start = 10 * kMs + b * 20 * kMs;
      db->add_event(run, "batch_wait", start, 10 * kMs, kMain, kMain, std::nullopt, b);
      db->add_event(run, "offcpu_blocked", start, 10 * kMs, kMain, kMain);
      db->add_event(run, "batch_compute", start + 10 * kMs, 10 * kMs, kMain, kMain, std::nullopt, b);
    }
    db->commit();
    ProfileBuilder p(*db, run);
    for (int b = 0; b < 18; ++b)  // the last two waits have no stack (written before the observer's)
      p.add_event_stack(kMain, 10 * kMs + b * 20 * kMs, "batch_wait",
                        {module(), main_frame, b < 15 ? epoch_line : validate});
  }
  const RunAnalysis a = analyze_path(path);
  const CausalChain* waits = nullptr;
  for (const CausalChain& c : a.chains.chains)
    if (c.victim == "batch_wait") waits = &c;
  ASSERT_NE(waits, nullptr);
  ASSERT_TRUE(waits->site);
  EXPECT_EQ(waits->site->function, "train_one_epoch");
  EXPECT_EQ(waits->site->file, "/home/u/train.py");
  EXPECT_EQ(waits->site->line, 57);
  EXPECT_EQ(waits->site->intervals, 15);
  EXPECT_EQ(waits->site->with_stack, 18);
  const ChainWords words = words_of(a, *waits);
  const bool line = std::any_of(words.timeline.begin(), words.timeline.end(), [](const std::string& l) {
    return l == "[SITE] waited at u/train.py:57 in train_one_epoch (15 of the 18 slow intervals with a stack)";
  });
  EXPECT_TRUE(line) << ::testing::PrintToString(words.timeline);
  const nlohmann::json j = to_json(*waits, words);
  EXPECT_EQ(j["site"]["text"], "u/train.py:57 in train_one_epoch");
  EXPECT_EQ(j["site"]["line"], 57);
  EXPECT_EQ(j["site"]["intervals"], 15);
  EXPECT_TRUE(causal_chain_schema()["properties"].contains("site"));
}

// A slow call's stack from the kernel: the call's native frames, torch's Python, then the user's; the
// user's frame is the innermost Python frame outside installed packages.
TEST(Profile, TheUsersFrameOfAStackSkipsInstalledPackages) {
  ProfileRecord profile;
  profile.frames[1] = native("ffi_call_unix64", "/usr/lib/x86_64-linux-gnu/libffi.so.8");
  profile.frames[2] = backward();
  profile.frames[3] = py("train_one_epoch", "/home/u/train.py", 57);
  profile.frames[4] = module();
  const std::vector<int64_t> innermost_first = {1, 2, 3, 4};
  const ProfileFrame* user = user_frame(profile, innermost_first);
  ASSERT_NE(user, nullptr);
  EXPECT_EQ(user->name, "train_one_epoch");
  // Only the library's Python: its innermost frame; only native frames: the innermost native one.
  EXPECT_EQ(user_frame(profile, {1, 2})->name, "Tensor.backward");
  EXPECT_EQ(user_frame(profile, {1})->name, "ffi_call_unix64");
  EXPECT_EQ(user_frame(profile, {}), nullptr);
}


// The kernel's Python walks that read nothing are counted by reason (profile_python_walks, as the tracer
// writes it): the profile's status says how many and why, and its JSON has the counts.
TEST(Profile, PythonWalkFailuresAreSaidByReason) {
  const std::string path = temp_db_path("profile-python-walks");
  {
    auto db = TraceFixture::create(path);
    const int64_t run = add_cpu_job(*db, 1000 * kMs);
    ProfileBuilder p(*db, run);
    p.add(kMain, {module(), train(), forward(), conv()}, 100);
    db->set_setting(run, "profile_python_walks",
                    R"({"ok":90,"no_layout":6,"no_thread":0,"read_fault":3,"not_code":1,"depth_cut":4})");
  }
  const RunAnalysis a = analyze_path(path);
  ASSERT_TRUE(a.profile);
  EXPECT_EQ(a.profile->python_walk_failures(), 10);
  EXPECT_EQ(profile_status_text(a.profile, true),
            "CPU profile: 100 on-CPU samples at 99 Hz per CPU; Python frames read (of 104 walks of Python frames: 6 "
            "in processes without a readable interpreter, 3 on a failed read of the process's memory, 1 on a frame "
            "that was not code, 4 cut at the walk's depth (outermost frames left out))");
  const nlohmann::json j = to_json(ProfileView{a.profile, true, 3, ""});
  EXPECT_EQ(j["python_walks"]["read_fault"], 3);
  EXPECT_EQ(j["python_walks"]["no_thread"], 0);
  EXPECT_EQ(j["python_walks"].size(), 6u);
}

}  // namespace
}  // namespace ingero::reports::testing

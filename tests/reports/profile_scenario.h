// SPDX-License-Identifier: Apache-2.0
// CPU profiles for the fixtures, written as the tracer's writer writes them: frames interned per
// run, stacks as a tree of (caller stack, frame), samples per thread, stack and time bucket, and the
// run settings that say a profile was taken.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common/trace_contract.h"
#include "tests/reports/trace_fixture.h"

namespace ingero::reports::testing {

inline ProfileFrame py(const std::string& name, const std::string& file, int64_t line) {
  return {std::string(contract::frame_kind::kPython), name, file, line, "executing"};
}
inline ProfileFrame native(const std::string& name, const std::string& file) {
  return {std::string(contract::frame_kind::kNative), name, file, std::nullopt, ""};
}
inline ProfileFrame kernel(const std::string& name) {
  return {std::string(contract::frame_kind::kKernel), name, "", std::nullopt, ""};
}

inline constexpr int64_t kProfileBucketNs = 100'000'000;

class ProfileBuilder {
 public:
  ProfileBuilder(TraceFixture& db, int64_t run_id, int hz = 99) : db_(db), run_(run_id) {
    db_.set_setting(run_, std::string(contract::kProfileHzSetting), std::to_string(hz));
    db_.set_setting(run_, std::string(contract::kProfilePythonSetting), "ok");
    db_.set_setting(run_, std::string(contract::kProfileBucketNsSetting), std::to_string(kProfileBucketNs));
  }

  // samples on thread tid of the stack `root_first` (its outermost frame first), in the bucket of ts_ns.
  int64_t add(int64_t tid, const std::vector<ProfileFrame>& root_first, int64_t samples, int64_t ts_ns = 0) {
    std::optional<int64_t> parent;
    for (const ProfileFrame& f : root_first) parent = stack(parent, frame(f));
    db_.add_profile_samples(run_, tid, parent.value_or(-1), ts_ns - ts_ns % kProfileBucketNs, samples);
    return parent.value_or(-1);
  }
  // The stack `root_first` made event (tid, ts_ns, op): an event_stacks row, no samples.
  void add_event_stack(int64_t tid, int64_t ts_ns, const std::string& op, const std::vector<ProfileFrame>& root_first) {
    std::optional<int64_t> parent;
    for (const ProfileFrame& f : root_first) parent = stack(parent, frame(f));
    db_.add_event_stack(run_, tid, ts_ns, op, parent.value_or(-1));
  }

 private:
  int64_t frame(const ProfileFrame& f) {
    auto key = std::make_tuple(f.kind, f.name, f.file, f.line.value_or(-1), f.line_kind);
    auto it = frames_.find(key);
    if (it != frames_.end()) return it->second;
    const int64_t id = static_cast<int64_t>(frames_.size()) + 1;
    db_.add_profile_frame(run_, id, f);
    frames_.emplace(key, id);
    return id;
  }
  int64_t stack(std::optional<int64_t> parent, int64_t frame_id) {
    auto key = std::make_pair(parent.value_or(0), frame_id);
    auto it = stacks_.find(key);
    if (it != stacks_.end()) return it->second;
    const int64_t id = static_cast<int64_t>(stacks_.size()) + 1;
    db_.add_profile_stack(run_, id, parent, frame_id);
    stacks_.emplace(key, id);
    return id;
  }

  TraceFixture& db_;
  int64_t run_;
  std::map<std::tuple<std::string, std::string, std::string, int64_t, std::string>, int64_t> frames_;
  std::map<std::pair<int64_t, int64_t>, int64_t> stacks_;
};

// Frames of a PyTorch job, as Debian's CPython 3.11 and torch lay them out.
namespace frames {
inline const std::string kTorch = "/usr/lib/python3/dist-packages/torch";
inline ProfileFrame module() { return py("<module>", "/home/u/train.py", 1); }
inline ProfileFrame train() { return py("train", "/home/u/train.py", 40); }
inline ProfileFrame next_batch() { return py("_BaseDataLoaderIter.__next__", kTorch + "/utils/data/dataloader.py", 628); }
inline ProfileFrame fetch() { return py("_MapDatasetFetcher.fetch", kTorch + "/utils/data/_utils/fetch.py", 51); }
inline ProfileFrame getitem() { return py("ImageFolder.__getitem__", "/usr/lib/python3/dist-packages/torchvision/datasets/folder.py", 229); }
inline ProfileFrame pil_load() { return py("ImageFile.load", "/usr/lib/python3/dist-packages/PIL/ImageFile.py", 255); }
inline ProfileFrame jpeg_decode() { return native("decode_mcu", "/usr/lib/x86_64-linux-gnu/libjpeg.so.62.3.0"); }
inline ProfileFrame to_tensor() { return py("ToTensor.__call__", "/usr/lib/python3/dist-packages/torchvision/transforms/transforms.py", 134); }
inline ProfileFrame collate() { return py("default_collate", kTorch + "/utils/data/_utils/collate.py", 265); }
inline ProfileFrame at_cat() { return native("at::native::cat_out", kTorch + "/lib/libtorch_cpu.so"); }
inline ProfileFrame forward() { return py("Module._call_impl", kTorch + "/nn/modules/module.py", 1501); }
inline ProfileFrame conv() { return native("at::native::_convolution", kTorch + "/lib/libtorch_cpu.so"); }
inline ProfileFrame backward() { return py("Tensor.backward", kTorch + "/_tensor.py", 487); }
inline ProfileFrame autograd() { return native("torch::autograd::Engine::evaluate_function", kTorch + "/lib/libtorch_cpu.so"); }
inline ProfileFrame log_step() { return py("log_step", "/home/u/train.py", 90); }
inline ProfileFrame randperm() { return native("at::native::randperm_out_cpu", kTorch + "/lib/libtorch_cpu.so"); }
inline ProfileFrame sampler_iter() { return py("RandomSampler.__iter__", kTorch + "/utils/data/sampler.py", 164); }
inline ProfileFrame worker_loop() { return py("_worker_loop", kTorch + "/utils/data/_utils/worker.py", 308); }
inline ProfileFrame memcpy_frame() { return native("__memmove_avx_unaligned_erms", "/usr/lib/x86_64-linux-gnu/libc.so.6"); }
inline ProfileFrame page_fault() { return kernel("clear_page_erms"); }
}  // namespace frames

}  // namespace ingero::reports::testing

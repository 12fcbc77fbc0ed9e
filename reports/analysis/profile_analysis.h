// SPDX-License-Identifier: Apache-2.0
// Where the CPU went: a run's on-CPU samples (ProfileRecord) per role (main, worker, pin, other) and
// per rank, as functions with their self and inclusive sample counts, and the main thread's samples
// split into batch building, the model's compute and the rest.
//
// A function is its frame's kind, name and file (every line of it together). Self: the samples whose
// sampled code (innermost frame) is that function. Inclusive: the samples with the function anywhere
// on their stack, once per stack however often it recurses. Shares are of the role's samples.
//
// The main thread's split (classify_frame, then the stack's class):
//   loader: Python frames under torch/utils/data/ (the DataLoader, its fetchers, default_collate),
//           a dataset's __getitem__ / __getitems__, a function named *collate* (the collate_fn),
//           torchvision's transforms, datasets and io, PIL (Python and its native _imaging), and the
//           image codecs' native libraries (libjpeg, libturbojpeg, libpng);
//   model:  Python frames under torch/nn/, torch/autograd/, torch/optim/ and torch/_tensor.py (where
//           backward() is), a method named forward or backward, and native frames of libtorch*
//           and libc10* (at::native, torch::autograd, c10) and of the math libraries they call
//           (libgomp, MKL, oneDNN, OpenBLAS);
//   other:  the rest (the loop's own Python, the interpreter, the kernel).
// A stack is loader work when any of its frames is loader code, since batch building calls torch
// ops (collate stacks tensors with at::native code); else model work when any frame is model code;
// else other. "The innermost classifiable frame" would call collate's torch.stack model compute.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/data/trace_data.h"

namespace ingero::reports {

enum class CpuPart { loader, model, other };
const char* cpu_part_name(CpuPart part);  // "loader", "model", "other"

// The class of one frame: loader or model code, or other when neither rule matches.
CpuPart classify_frame(const ProfileFrame& frame);
// A stack's class by the rule above (its frames, innermost first).
CpuPart classify_stack(const std::vector<const ProfileFrame*>& frames);

// What a role's samples spent in image decoding, collate and randperm: the shares of its samples
// whose stacks hold such a frame (decode: a name with "decode" or "Decode", JPEG/PNG plugin code, an
// image codec's library; collate: a name with "collate"; randperm: a name with "randperm").
struct FrameEvidence {
  double decode = 0;
  double collate = 0;
  double randperm = 0;
};

// One function's samples in one role.
struct FrameShare {
  std::string kind;  // contract::frame_kind
  std::string name;
  std::string file;
  std::optional<int64_t> line;  // the function's first line where stored, else the most sampled line
  std::string line_kind;
  int64_t self_samples = 0;
  int64_t inclusive_samples = 0;
  double self_share = 0;       // of the role's samples
  double inclusive_share = 0;
};

// The main thread's samples in the three parts.
struct CpuSplit {
  int64_t loader = 0;
  int64_t model = 0;
  int64_t other = 0;
  int64_t total() const { return loader + model + other; }
  double share(CpuPart part) const;
  // The part with the most samples (ties: loader, then model).
  CpuPart largest() const;
};

// The samples of one role (and rank, where the run has ranks).
struct RoleProfile {
  std::string role;
  std::optional<int64_t> rank;  // none: every rank together
  int threads = 0;              // threads sampled
  int64_t samples = 0;
  std::vector<FrameShare> frames;  // every function, most self samples first
  std::optional<CpuSplit> split;   // main only
  FrameEvidence evidence;
  std::vector<FrameShare> top_by_self(size_t n) const;
  std::vector<FrameShare> top_by_inclusive(size_t n) const;
};

// One stack of a role with its samples, root frame first (the folded export, the flame graph).
struct FoldedStack {
  std::vector<std::string> frames;  // root first
  int64_t samples = 0;
};

struct ProfileAnalysis {
  std::optional<int64_t> hz;   // profile_hz as recorded
  std::string python;          // profile_python: "ok" or why Python frames are unavailable; empty if unrecorded
  std::optional<int64_t> bucket_ns;
  // The kernel's walks of Python frames by outcome (profile_python_walks: ok, no_layout, no_thread,
  // read_fault, not_code, depth_cut), over the whole run; empty where unrecorded.
  std::map<std::string, int64_t> python_walks;
  int64_t python_walk_failures() const;  // the walks that read no frame (depth_cut read some)
  int64_t samples = 0;         // in the analysed window, every thread
  std::vector<RoleProfile> roles;  // main, worker, pin, other (those sampled), every rank together
  std::vector<RoleProfile> ranks;  // per role and rank, where threads carry ranks
  const RoleProfile* role(const std::string& name) const;
  // The main thread's split when it was sampled.
  std::optional<CpuSplit> main_split() const;
};

// Whether a run was profiled, from its settings: profile_hz recorded and not 0.
bool profile_taken(const RunContext& context);

// The analysis of a profile read for the run's threads; none when it holds no samples.
std::optional<ProfileAnalysis> analyze_profile(const RunContext& context, const ProfileRecord& profile);

// The profile's stacks of one role (every role when empty), folded root first and merged by their
// frames' names; sorted by their frames. Frame names are display names (frame_label).
std::vector<FoldedStack> folded_stacks(const RunContext& context, const ProfileRecord& profile,
                                       const std::string& role);

// A role's stacks merged into a tree of frames, root first, for the flame graph: a node's samples
// are those of every stack through it; children ordered by name (a flame graph's order).
struct FlameNode {
  std::string name;  // frame_label; the root: the role
  CpuPart part = CpuPart::other;  // classify_frame of its frame (the root: other)
  int64_t samples = 0;
  std::vector<FlameNode> children;
};
FlameNode flame_tree(const RunContext& context, const ProfileRecord& profile, const std::string& role);

// A function's display name: a Python frame's qualified name, a native symbol with its binary's
// file name in brackets ("decode_mcu [libjpeg.so.62]"), a kernel symbol with "[kernel]".
std::string frame_label(const ProfileFrame& frame);
std::string frame_label(const FrameShare& frame);

// Thresholds of the changes that follow from frames (a share of the role's samples, inclusive).
inline constexpr double kDecodeDominates = 0.30;     // image decoding
inline constexpr double kCollateDominates = 0.30;    // collate
inline constexpr double kRandpermMatters = 0.05;     // randperm: the sampler's order, rebuilt each epoch
inline constexpr double kModelDominates = 0.50;      // the model's share of the main thread: compute-bound


}  // namespace ingero::reports

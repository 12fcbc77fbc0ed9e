// SPDX-License-Identifier: Apache-2.0
#include "reports/analysis/change_checks.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/knobs.h"
#include "common/trace_contract.h"
#include "reports/analysis/profile_causes.h"
#include "reports/analysis/run_metrics.h"
#include "reports/analysis/significance.h"

namespace ingero::reports {

namespace {

// What decides a run's speed, normalised: prefetch only counts with workers, and the
// measurement settings (epochs, warm-up, repeats, deadline, seed) do not count. More than the sweep's
// knobs, and persistence without workers reads "off" here where the sweep's leave it "".
Knobs knobs_of(const nlohmann::json& config) {
  Knobs k = storage_knobs(config);  // the page cache's state counts only on disk, the image size only for JPEG
  for (const char* key : {knob::kMode, "device", "samples", "features", "hidden", "classes", "batch_size", "drop_last",
                          knob::kNumWorkers, knob::kPinMemory, knob::kPersistentWorkers, "shuffle", "train", "cpus",
                          "ranks"})
    k.set(key, knob_text(config, key, key == std::string("ranks") ? "1" : ""));
  const bool workers = k.get(knob::kNumWorkers) != "0";
  k.set(knob::kPrefetchFactor, workers ? knob_text(config, knob::kPrefetchFactor, "2") : "");
  if (!workers) k.set(knob::kPersistentWorkers, "off");
  return k;
}

Knobs with_change(Knobs k, const Change& change) {
  k.set(change.knob, change.value);
  if (change.knob == knob::kNumWorkers) {
    if (change.value == "0") {
      k.set(knob::kPrefetchFactor, "");
      k.set(knob::kPersistentWorkers, "off");
    } else if (k.get(knob::kPrefetchFactor).empty()) {
      k.set(knob::kPrefetchFactor, "2");
    }
  }
  return k;
}

std::optional<double> median_of(const RunRecord& run) {
  auto epochs = measured_epochs(run);
  if (epochs.empty() || run.status != "ok") return std::nullopt;
  return median(epochs);
}

std::string flag_value(const Knobs& k, const std::string& name, const Change& change) {
  return name == change.knob ? k.get(name) + "," + change.value : k.get(name);
}

// The knobs the observer can change in a job without its code being edited.
bool overridable_knob(const std::string& name) {
  return std::find(std::begin(knob::kLoaderKnobs), std::end(knob::kLoaderKnobs), name) != std::end(knob::kLoaderKnobs);
}

std::string change_in_code(const Change& change) {
  if (change.knob == "sampling" && change.value == "batched")
    return "one gather per batch: sampler=BatchSampler(RandomSampler(dataset), batch_size, drop_last), "
           "batch_size=None, or a dataset with __getitems__";
  if (change.knob == kDecoderKnob && change.value == kFastDecoder)
    return "decode with torchvision.io.decode_jpeg (libjpeg-turbo on the tensor's bytes, no PIL image) instead of "
           "PIL, and decode fewer bytes: smaller stored images, or a reduced-size decode (PIL's Image.draft)";
  if (change.knob == kSamplerKnob && change.value == kPreShuffledSampler)
    return "a pre-shuffled index: one permutation computed once (or stored with the data) and a sampler that "
           "walks it, instead of RandomSampler's torch.randperm at every epoch's start";
  if (change.knob == kSamplerKnob && change.value == kCheaperSampler)
    return "a sampler that does not build the whole epoch's order up front, or one order computed once and reused";
  return change.knob + "=" + change.value;
}

}  // namespace

std::string shell_quoted(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
                          std::string::npos)
    return arg;
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string measuring_command(const RunRecord& run, const Change& change, const std::string& db_path) {
  const Knobs k = knobs_of(run.config);
  std::string cmd = fmt::format("ingero-bench --workload dataloader --mode {} --num-workers {}",
                                flag_value(k, knob::kMode, change), flag_value(k, knob::kNumWorkers, change));
  if (!k.get(knob::kPrefetchFactor).empty() || change.knob == knob::kPrefetchFactor)
    cmd += " --prefetch-factor " + flag_value(k, knob::kPrefetchFactor, change);
  for (const char* sw : {knob::kPinMemory, knob::kPersistentWorkers}) {
    const std::string value = flag_value(k, sw, change);
    std::string flag = std::string("--") + sw;
    for (auto& ch : flag)
      if (ch == '_') ch = '-';
    if (value != "off" && value != "") cmd += fmt::format(" {} {}", flag, value);
  }
  cmd += fmt::format(" --samples {} --features {} --batch-size {}", k.get("samples"), k.get("features"),
                     k.get("batch_size"));
  if (k.get(knob::kStorage) != "memory" || change.knob == knob::kStorage) {
    cmd += " --storage " + flag_value(k, knob::kStorage, change);
    if (k.get(knob::kFormat) != "raw") cmd += " --format " + k.get(knob::kFormat);
    if (!k.get(knob::kImageSize).empty()) cmd += " --image-size " + k.get(knob::kImageSize);
    cmd += " --page-cache " + flag_value(k, knob::kPageCache, change);
  }
  if (k.get("shuffle") == "off") cmd += " --no-shuffle";
  if (k.get("ranks") != "1" || change.knob == "ranks") cmd += " --ranks " + flag_value(k, "ranks", change);
  if (k.get("train") == "on" && k.get("ranks") == "1") cmd += " --train";
  if (k.get("train") == "off" && k.get("ranks") != "1") cmd += " --no-train";  // DDP trains by default
  if (!k.get("cpus").empty() && k.get("cpus") != "0") cmd += " --cpus " + k.get("cpus");
  if (!k.get("device").empty()) cmd += " --device " + k.get("device");
  return cmd + " --db " + db_path;
}

ChangeCheck check_change(const Change& change, const RunRecord& run, const std::vector<RunRecord>& runs,
                         const std::string& db_path) {
  ChangeCheck check{change, std::nullopt, "", median_of(run), std::nullopt, ""};
  if (!run.config.is_object()) return check;
  const Knobs wanted = with_change(knobs_of(run.config), change);
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {  // the latest measurement first
    if (it->run_id == run.run_id || !it->config.is_object() || knobs_of(it->config) != wanted) continue;
    if (auto m = median_of(*it)) {
      check.run_id = it->run_id;
      check.label = it->label;
      check.other_median_s = m;
      break;
    }
  }
  if (!check.run_id) check.command = measuring_command(run, change, db_path);
  return check;
}

std::string user_job_command(const RunRecord& run, const Change& change, const std::string& db_path) {
  std::string job;
  for (const std::string& arg : run.command) job += " " + shell_quoted(arg);
  if (overridable_knob(change.knob)) {
    std::string flag = change.knob;
    std::replace(flag.begin(), flag.end(), '_', '-');
    // The sweep measures the job as written beside the change, and verifies the faster one.
    return fmt::format("ingero-bench sweep --db {} --{} {} --{}", shell_quoted(db_path), flag, change.value, job);
  }
  return fmt::format("change the DataLoader in the code ({}), then: ingero-bench trace --db {} --{}",
                     change_in_code(change), shell_quoted(db_path), job);
}

void check_changes(std::vector<CausalChain>& chains, const RunRecord& run, const std::vector<RunRecord>& runs,
                   const std::string& db_path) {
  const bool user_job = !run.config.is_object() && run.kind != contract::kind::kWorkload && !run.command.empty();
  if (!run.config.is_object() && !user_job) return;
  for (CausalChain& chain : chains)
    for (const Change& change : chain.changes) {
      if (!user_job) {
        chain.checks.push_back(check_change(change, run, runs, db_path));
        continue;
      }
      ChangeCheck check{change, std::nullopt, "", std::nullopt, std::nullopt, user_job_command(run, change, db_path)};
      chain.checks.push_back(std::move(check));
    }
}

}  // namespace ingero::reports

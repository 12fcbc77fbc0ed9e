// SPDX-License-Identifier: Apache-2.0
#include "workloads/config.h"

#include <algorithm>
#include <array>
#include <cstdlib>

#include <fmt/format.h>

#include "common/epoch_batches.h"
#include "common/trace_contract.h"

namespace ingero::workloads {

namespace {

// Mode values are positions in the contract's mode table (common/trace_contract.h).
const contract::ModeInfo& info(Mode mode) { return contract::kModes[static_cast<size_t>(mode)]; }

std::string known_modes() {
  std::string out;
  for (const auto& m : contract::kModes) {
    if (!out.empty()) out += ", ";
    out += m.name;
  }
  return out;
}

// One name per enumerator, in its order; parse reports every name as the fix.
template <class Enum, size_t N>
Result<Enum> parse_named(const char* flag, const std::string& name, const std::array<const char*, N>& names) {
  std::string all;
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i]) return static_cast<Enum>(i);
    all += (i ? ", " : "") + std::string(names[i]);
  }
  return Error::bad_input(fmt::format("{} '{}' is not known", flag, name), fmt::format("use {} {}", flag, all));
}

constexpr std::array<const char*, 3> kStorageNames = {"memory", "files", "shards"};
constexpr std::array<const char*, 2> kFormatNames = {"raw", "jpeg"};
constexpr std::array<const char*, 2> kPageCacheNames = {"warm", "cold"};

}  // namespace

std::string storage_name(Storage s) { return kStorageNames[static_cast<size_t>(s)]; }
std::string format_name(SampleFormat f) { return kFormatNames[static_cast<size_t>(f)]; }
std::string page_cache_name(PageCache p) { return kPageCacheNames[static_cast<size_t>(p)]; }
Result<Storage> parse_storage(const std::string& name) { return parse_named<Storage>("--storage", name, kStorageNames); }
Result<SampleFormat> parse_format(const std::string& name) {
  return parse_named<SampleFormat>("--format", name, kFormatNames);
}
Result<PageCache> parse_page_cache(const std::string& name) {
  return parse_named<PageCache>("--page-cache", name, kPageCacheNames);
}

std::string default_dataset_cache() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg == '/') return std::string(xdg) + "/ingero-bench/datasets";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home ? home : "/tmp") + "/.cache/ingero-bench/datasets";
}

// Mode is tied to contract::kModes by position: each enumerator checks the name at its place, so
// that a mode added, dropped or reordered on one side only fails to compile.
constexpr bool mode_at(Mode mode, std::string_view name) {
  return contract::kModes[static_cast<size_t>(mode)].name == name;
}
static_assert(std::size(contract::kModes) == static_cast<size_t>(Mode::python_direct) + 1,
              "workloads::Mode and contract::kModes list different modes");
static_assert(mode_at(Mode::direct, "direct") && mode_at(Mode::direct_shuffled, "direct-shuffled") &&
                  mode_at(Mode::resident, "resident") && mode_at(Mode::loader, "loader") &&
                  mode_at(Mode::loader_batched, "loader-batched") && mode_at(Mode::torch_loader, "torch-loader") &&
                  mode_at(Mode::python, "python") && mode_at(Mode::python_direct, "python-direct"),
              "workloads::Mode is not in the order of contract::kModes");

const std::vector<Mode>& all_modes() {
  static const std::vector<Mode> modes = [] {
    std::vector<Mode> v;
    for (size_t i = 0; i < std::size(contract::kModes); ++i) v.push_back(static_cast<Mode>(i));
    return v;
  }();
  return modes;
}

std::string mode_name(Mode mode) { return std::string(info(mode).name); }
bool mode_uses_workers(Mode mode) { return info(mode).uses_workers; }
bool mode_runs_in_python(Mode mode) { return info(mode).runs_in_python; }

Result<Mode> parse_mode(const std::string& name) {
  if (const contract::ModeInfo* m = contract::find_mode(name)) return static_cast<Mode>(m - contract::kModes);
  return Error::bad_input(fmt::format("unknown mode '{}'", name),
                          fmt::format("use one of: {}, or all", known_modes()));
}

int64_t WorkloadConfig::batches_per_epoch() const {
  return epoch_batches(samples, batch_size, drop_last, max_batches);
}

int64_t WorkloadConfig::batches_in_epoch(int epoch) const {
  if (epoch < warmup_epochs && max_batches > 0) return epoch_batches(samples, batch_size, drop_last, warmup_cut());
  return batches_per_epoch();
}

int64_t WorkloadConfig::warmup_cut() const {
  return warmup_batches > 0 ? warmup_batches : std::max(max_batches, kSettledWarmupBatches);
}

std::string WorkloadConfig::label() const {
  std::string out = mode_name(mode);
  if (mode_uses_workers(mode)) {
    out += fmt::format(" w{}", num_workers);
    if (num_workers > 0) out += fmt::format(" pf{}", effective_prefetch_factor());
    if (pin_memory) out += " pin";
    if (persistent_workers) out += " persistent";
  }
  if (!shuffle && mode != Mode::direct && mode != Mode::resident) out += " noshuffle";
  if (on_disk()) {
    out += " " + storage_name(storage);
    if (format == SampleFormat::jpeg) out += fmt::format(" jpeg{}", image_size);
    if (page_cache == PageCache::cold) out += " cold";
  }
  if (ranks > 1) out += fmt::format(" ranks{}", ranks);
  if (train) out += " train";
  if (cpus > 0) out += fmt::format(" cpus{}", cpus);
  return out;
}

Status validate(const WorkloadConfig& c) {
  if (c.device != "auto" && c.device != "cpu" && c.device != "cuda") {
    return Error::bad_input(fmt::format("unknown device '{}'", c.device), "use --device auto, cpu or cuda");
  }
  if (c.samples <= 0) return Error::bad_input("--samples must be positive", "e.g. --samples 7000000");
  if (c.features <= 0) return Error::bad_input("--features must be positive", "e.g. --features 100");
  if (c.hidden <= 0 || c.classes <= 0) {
    return Error::bad_input("--hidden and --classes must be positive");
  }
  if (c.batch_size <= 0) {
    return Error::bad_input(fmt::format("--batch-size must be positive, got {}", c.batch_size),
                            "e.g. --batch-size 1048576");
  }
  if (c.samples < c.batch_size) {
    return Error::bad_input(
        fmt::format("--samples ({}) is smaller than --batch-size ({})", c.samples, c.batch_size),
        "raise --samples or lower --batch-size");
  }
  if (c.num_workers < 0) {
    return Error::bad_input(fmt::format("--num-workers must be >= 0, got {}", c.num_workers),
                            "use 0 to load in the main process");
  }
  if (c.prefetch_factor && c.num_workers == 0 && mode_uses_workers(c.mode)) {
    // PyTorch: "prefetch_factor option could only be specified in multiprocessing".
    return Error::bad_input("--prefetch-factor needs --num-workers > 0 (as in PyTorch's DataLoader)",
                            "drop --prefetch-factor or set --num-workers");
  }
  if (c.prefetch_factor && *c.prefetch_factor < 1) {
    return Error::bad_input(fmt::format("--prefetch-factor must be >= 1, got {}", *c.prefetch_factor));
  }
  if (c.persistent_workers && c.num_workers == 0 && mode_uses_workers(c.mode)) {
    return Error::bad_input("--persistent-workers needs --num-workers > 0 (as in PyTorch's DataLoader)",
                            "drop --persistent-workers or set --num-workers");
  }
  if (c.epochs < 1) return Error::bad_input("--epochs must be >= 1");
  if (c.warmup_epochs < 0) return Error::bad_input("--warmup-epochs must be >= 0");
  if (c.repeat < 1) return Error::bad_input("--repeat must be >= 1");
  if (c.cpus < 0) return Error::bad_input("--cpus must be >= 0 (0: not pinned)");
  if (c.ranks < 1) return Error::bad_input(fmt::format("--ranks must be >= 1, got {}", c.ranks));
  if (c.ranks > 1 && c.mode != Mode::python)
    // LibTorch's C++ frontend has no DistributedDataParallel; its c10d process groups are not
    // part of the packaged headers this builds against.
    return Error::bad_input(fmt::format("--ranks {} runs the python mode only (torch.distributed DDP); the {} mode "
                                        "is one process",
                                        c.ranks, mode_name(c.mode)),
                            "use --mode python with --ranks, or --ranks 1 for the other modes");
  if (c.ranks > 1 && c.samples / c.ranks < c.batch_size)
    return Error::bad_input(fmt::format("--samples ({}) split over {} ranks leaves each rank less than one batch "
                                        "of {}",
                                        c.samples, c.ranks, c.batch_size),
                            "raise --samples or lower --batch-size");
  if (c.epoch_deadline_s < 0) return Error::bad_input("the epoch deadline must be >= 0 (0: none)");
  if (c.max_batches < 0) return Error::bad_input("--max-batches must be >= 1 (0: whole epochs)");
  if (c.warmup_batches < 0) return Error::bad_input("warm-up batches must be >= 1 (0: a measured epoch's cut, at least 4)");
  if (c.drop_last && c.samples / c.batch_size == 0) {
    return Error::bad_input("--drop-last leaves no batch", "lower --batch-size");
  }
  return validate_storage(c);
}

Status validate_storage(const WorkloadConfig& c) {
  if (c.mode == Mode::resident && c.on_disk())
    return Error::bad_input(fmt::format("--storage {} with --mode resident: resident uploads an in-memory dataset "
                                        "to the device once and never reads storage",
                                        storage_name(c.storage)),
                            "use --storage memory with resident, or another mode (direct, loader, python, ...)");
  if (c.format == SampleFormat::jpeg && !c.on_disk())
    return Error::bad_input("--format jpeg needs a dataset on disk (the images are stored and decoded per sample)",
                            "add --storage files or --storage shards, or drop --format");
  if (c.page_cache == PageCache::cold && !c.on_disk())
    return Error::bad_input("--page-cache cold needs a dataset on disk: an in-memory dataset has no page cache to "
                            "evict",
                            "add --storage files or --storage shards, or drop --page-cache");
  if (c.format == SampleFormat::raw && c.image_size != 0)
    return Error::bad_input("--image-size is for --format jpeg", "add --format jpeg, or drop --image-size");
  if (c.format == SampleFormat::jpeg) {
    if (c.image_size < 8 || c.image_size > kMaxImageSize)
      return Error::bad_input(fmt::format("--image-size {} is outside 8..{}", c.image_size, kMaxImageSize),
                              fmt::format("e.g. --image-size {} (S x S x 3 images)", kDefaultImageSize));
    const int64_t features = 3 * c.image_size * c.image_size;
    if (c.features != features)
      return Error::bad_input(fmt::format("--features {} conflicts with --image-size {}: a {}x{}x3 image is {} "
                                          "features",
                                          c.features, c.image_size, c.image_size, c.image_size, features),
                              fmt::format("drop --features (it follows --image-size), or pass --features {}", features));
  }
  if (c.on_disk() && c.dataset_cache.empty() && default_dataset_cache().empty())
    return Error::bad_input("no dataset cache folder", "pass --dataset-cache DIR");
  return {};
}

nlohmann::json to_json(const WorkloadConfig& c) {
  nlohmann::json j = {
      {"mode", mode_name(c.mode)},
      {"device", c.device},
      {"samples", c.samples},
      {"features", c.features},
      {"hidden", c.hidden},
      {"classes", c.classes},
      {"batch_size", c.batch_size},
      {"drop_last", c.drop_last},
      {"num_workers", c.num_workers},
      {"prefetch_factor", c.num_workers > 0 ? nlohmann::json(c.effective_prefetch_factor()) : nlohmann::json()},
      {"pin_memory", c.pin_memory},
      {"persistent_workers", c.persistent_workers},
      {"shuffle", c.shuffle},
      {"epochs", c.epochs},
      {"warmup_epochs", c.warmup_epochs},
      {"repeat", c.repeat},
      {"train", c.train},
      {"cpus", c.cpus},
      {"seed", c.seed},
      {"ranks", c.ranks},
  };
  if (c.epoch_deadline_s > 0) j["epoch_deadline_s"] = c.epoch_deadline_s;
  if (c.max_batches > 0) j["max_batches"] = c.max_batches;
  if (c.max_batches > 0) j["warmup_batches"] = c.warmup_cut();
  j["storage"] = storage_name(c.storage);
  if (c.on_disk()) {
    j["format"] = format_name(c.format);
    if (c.format == SampleFormat::jpeg) j["image_size"] = c.image_size;
    j["page_cache"] = page_cache_name(c.page_cache);
    j["dataset_cache"] = c.dataset_cache_dir();
  }
  return j;
}

Result<WorkloadConfig> config_from_json(const nlohmann::json& j) {
  try {
    WorkloadConfig c;
    auto mode = parse_mode(j.at("mode").get<std::string>());
    if (!mode) return mode.error();
    c.mode = *mode;
    c.device = j.at("device").get<std::string>();
    c.samples = j.at("samples").get<int64_t>();
    c.features = j.at("features").get<int64_t>();
    c.hidden = j.at("hidden").get<int64_t>();
    c.classes = j.at("classes").get<int64_t>();
    c.batch_size = j.at("batch_size").get<int64_t>();
    c.drop_last = j.at("drop_last").get<bool>();
    c.num_workers = j.at("num_workers").get<int>();
    if (!j.at("prefetch_factor").is_null()) c.prefetch_factor = j.at("prefetch_factor").get<int>();
    c.pin_memory = j.at("pin_memory").get<bool>();
    c.persistent_workers = j.at("persistent_workers").get<bool>();
    c.shuffle = j.at("shuffle").get<bool>();
    c.epochs = j.at("epochs").get<int>();
    c.warmup_epochs = j.at("warmup_epochs").get<int>();
    c.repeat = j.at("repeat").get<int>();
    c.train = j.at("train").get<bool>();
    c.cpus = j.at("cpus").get<int>();
    c.seed = j.at("seed").get<uint64_t>();
    c.ranks = j.value("ranks", 1);
    c.epoch_deadline_s = j.value("epoch_deadline_s", 0.0);
    c.max_batches = j.value("max_batches", int64_t{0});
    c.warmup_batches = j.value("warmup_batches", int64_t{0});
    // Records from before on-disk datasets have none of these: memory, as they ran.
    auto storage = parse_storage(j.value("storage", "memory"));
    if (!storage) return storage.error();
    c.storage = *storage;
    auto format = parse_format(j.value("format", "raw"));
    if (!format) return format.error();
    c.format = *format;
    c.image_size = j.value("image_size", int64_t{0});
    auto page_cache = parse_page_cache(j.value("page_cache", "warm"));
    if (!page_cache) return page_cache.error();
    c.page_cache = *page_cache;
    c.dataset_cache = j.value("dataset_cache", "");
    return c;
  } catch (const nlohmann::json::exception& e) {
    return Error::bad_input(std::string("malformed workload configuration: ") + e.what());
  }
}

}  // namespace ingero::workloads

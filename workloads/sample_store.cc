// SPDX-License-Identifier: Apache-2.0
#include "workloads/sample_store.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/json_text.h"
#include "common/unique_fd.h"
#include "workloads/jpeg_samples.h"
#include "workloads/model.h"
#include "workloads/preparation_report.h"

namespace ingero::workloads {

namespace {

[[noreturn]] void fail(const Error& e) { throw DatasetError(e.message); }

// Reads exactly `bytes` at `offset`; a short read is a truncated file.
std::string pread_exactly(int fd, size_t bytes, off_t offset, const std::string& path, int64_t sample) {
  std::string buffer(bytes, '\0');
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd, buffer.data() + done, bytes - done, offset + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw DatasetError(fmt::format("sample {}: reading {}: {}", sample, path, std::strerror(errno)));
    if (n == 0)
      throw DatasetError(fmt::format("sample {} in {}: truncated file ({} of {} bytes from offset {})", sample, path,
                                     done, bytes, offset));
    done += static_cast<size_t>(n);
  }
  return buffer;
}

// Payload -> the row the model sees: raw float32 copied, JPEG decoded and transformed.
class PayloadDecoder {
 public:
  explicit PayloadDecoder(const dataset::Layout& layout) : layout_(layout) {}
  void decode(std::string_view payload, float* row, int64_t index, int epoch, const std::string& file) const {
    if (layout_.format == SampleFormat::raw) {
      const size_t want = static_cast<size_t>(layout_.features) * sizeof(float);
      if (payload.size() != want)
        throw DatasetError(fmt::format("sample {} in {}: {} payload bytes, {} features need {}", index, file,
                                       payload.size(), layout_.features, want));
      std::memcpy(row, payload.data(), want);
      return;
    }
    // One decompressor per thread: torch-loader's worker threads decode side by side.
    thread_local jpeg::Decoder decoder;
    thread_local std::vector<uint8_t> rgb;
    rgb.resize(static_cast<size_t>(layout_.features));
    if (Status s = decoder.decode(payload, layout_.image_size, rgb.data()); !s)
      throw DatasetError(fmt::format("sample {} in {}: {}", index, file, s.error().message));
    jpeg::transform(rgb.data(), layout_.image_size, jpeg::flips(layout_.seed, epoch, index), row);
  }

 private:
  dataset::Layout layout_;
};

class MemoryStore final : public SampleStore {
 public:
  explicit MemoryStore(torch::Tensor data) : data_(std::move(data)) {}
  int64_t samples() const override { return data_.size(0); }
  int64_t features() const override { return data_.size(1); }
  void read_into(float* row, int64_t index, int) const override {
    std::memcpy(row, data_[index].data_ptr<float>(), static_cast<size_t>(features()) * sizeof(float));
  }
  torch::Tensor tensor() const override { return data_; }

 private:
  torch::Tensor data_;
};

class DiskStore : public SampleStore {
 public:
  explicit DiskStore(dataset::Entry entry) : entry_(std::move(entry)), decoder_(entry_.layout) {}
  int64_t samples() const override { return entry_.layout.samples; }
  int64_t features() const override { return entry_.layout.features; }
  const dataset::Entry* entry() const override { return &entry_; }

 protected:
  // Checks one record and decodes it into row.
  void accept(std::string_view record, float* row, int64_t index, int epoch, const std::string& file) const {
    auto payload = dataset::check_record(record, index, file);
    if (!payload) fail(payload.error());
    decoder_.decode(*payload, row, index, epoch, file);
  }
  dataset::Entry entry_;
  PayloadDecoder decoder_;
};

// One file per sample, opened per read, as a map-style Dataset's __getitem__ does.
class FileStore final : public DiskStore {
 public:
  using DiskStore::DiskStore;
  void read_into(float* row, int64_t index, int epoch) const override {
    const dataset::StoredFile& file = entry_.files[static_cast<size_t>(index)];
    const std::string path = entry_.path(file);
    auto fd = open_regular_file(path);
    if (!fd) throw DatasetError(fmt::format("sample {}: {}", index, fd.error().message));
    accept(pread_exactly(fd->get(), static_cast<size_t>(file.bytes), 0, path, index), row, index, epoch, path);
  }
};

// A few shards, their descriptors opened once: pread takes its own offset, so forked workers
// share them without seeking each other's.
class ShardStore final : public DiskStore {
 public:
  explicit ShardStore(dataset::Entry entry) : DiskStore(std::move(entry)), per_shard_(entry_.layout.shard_samples()) {
    auto offsets = dataset::read_shard_index(entry_);
    if (!offsets) fail(offsets.error());
    offsets_ = std::move(*offsets);
    for (size_t s = 0; s + 1 < entry_.files.size(); ++s) {  // the last file is index.bin
      const std::string path = entry_.path(entry_.files[s]);
      auto fd = open_regular_file(path);
      if (!fd) throw DatasetError(fd.error().message);
      shards_.push_back(std::move(*fd));
    }
  }
  void read_into(float* row, int64_t index, int epoch) const override { read_run(row, index, 1, epoch); }
  void read_range_into(float* out, int64_t start, int64_t count, int epoch) const override {
    // One pread per shard the range touches.
    while (count > 0) {
      const int64_t in_shard = std::min(count, (start / per_shard_ + 1) * per_shard_ - start);
      read_run(out, start, in_shard, epoch);
      out += in_shard * features();
      start += in_shard;
      count -= in_shard;
    }
  }

 private:
  // Samples [start, start + count), all in one shard: one pread, then each record checked.
  void read_run(float* out, int64_t start, int64_t count, int epoch) const {
    const int64_t shard = start / per_shard_;
    const std::string path = entry_.path(entry_.files[static_cast<size_t>(shard)]);
    const uint64_t begin = offsets_[static_cast<size_t>(start)];
    const uint64_t end = end_of(start + count - 1);
    if (end < begin) throw DatasetError(fmt::format("sample {} in {}: the shard index is out of order", start, path));
    const std::string bytes =
        pread_exactly(shards_[static_cast<size_t>(shard)].get(), end - begin, static_cast<off_t>(begin), path, start);
    for (int64_t i = 0; i < count; ++i) {
      const uint64_t from = offsets_[static_cast<size_t>(start + i)] - begin;
      const uint64_t to = end_of(start + i) - begin;
      if (to < from || to > bytes.size())
        throw DatasetError(fmt::format("sample {} in {}: the shard index is out of order", start + i, path));
      accept(std::string_view(bytes).substr(from, to - from), out + i * features(), start + i, epoch, path);
    }
  }
  // Where sample i's record ends: the next record of its shard, or the shard's end.
  uint64_t end_of(int64_t i) const {
    const bool last_in_shard = (i + 1) % per_shard_ == 0 || i + 1 == samples();
    if (!last_in_shard) return offsets_[static_cast<size_t>(i + 1)];
    return static_cast<uint64_t>(entry_.files[static_cast<size_t>(i / per_shard_)].bytes);
  }

  int64_t per_shard_;
  std::vector<uint64_t> offsets_;
  std::vector<UniqueFd> shards_;
};

}  // namespace

void SampleStore::read_range_into(float* out, int64_t start, int64_t count, int epoch) const {
  for (int64_t i = 0; i < count; ++i) read_into(out + i * features(), start + i, epoch);
}

torch::Tensor read_range(const SampleStore& store, int64_t start, int64_t count, int epoch) {
  auto out = torch::empty({count, store.features()}, torch::kFloat32);
  store.read_range_into(out.data_ptr<float>(), start, count, epoch);
  return out;
}

torch::Tensor read_row(const SampleStore& store, int64_t index, int epoch) {
  auto row = torch::empty({store.features()}, torch::kFloat32);
  store.read_into(row.data_ptr<float>(), index, epoch);
  return row;
}

void collate_into(torch::Tensor& out, const SampleStore& store, const torch::Tensor& indices, bool per_sample,
                  int epoch) {
  const torch::Tensor memory = store.tensor();
  const int64_t n = indices.size(0);
  const int64_t* idx = indices.data_ptr<int64_t>();
  if (!per_sample) {
    if (memory.defined()) {
      torch::index_select_out(out, memory, 0, indices);
      return;
    }
    for (int64_t i = 0; i < n; ++i) store.read_into(out[i].data_ptr<float>(), idx[i], epoch);
    return;
  }
  // What automatic batching does: dataset[i] once per sample, then default_collate's stack.
  std::vector<torch::Tensor> samples;
  samples.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    samples.push_back(memory.defined() ? memory.select(0, idx[i]) : read_row(store, idx[i], epoch));
  torch::stack_out(out, samples, 0);
}

dataset::PayloadOf payloads_for(const WorkloadConfig& config) {
  if (config.format == SampleFormat::jpeg) {
    return [size = config.image_size, seed = config.seed](int64_t i) {
      auto jpeg = jpeg::encode(jpeg::generate_image(size, seed, i), size, dataset::kJpegQuality);
      if (!jpeg) fail(jpeg.error());
      return *jpeg;
    };
  }
  // The very values of the in-memory dataset, so every storage gives the same model outputs.
  const torch::Tensor data = make_dataset(config).contiguous();
  return [data](int64_t i) {
    const float* row = data[i].data_ptr<float>();
    return std::string(reinterpret_cast<const char*>(row), static_cast<size_t>(data.size(1)) * sizeof(float));
  };
}

Result<dataset::Entry> prepare_dataset(const WorkloadConfig& config, const std::function<bool()>& stop) {
  try {
    return dataset::open_or_write(dataset::layout_of(config), config.dataset_cache_dir(),
                                  [&] { return payloads_for(config); }, stop);
  } catch (const DatasetError& e) {
    return Error::failure(e.what());
  }
}

std::shared_ptr<SampleStore> memory_store(torch::Tensor data) { return std::make_shared<MemoryStore>(std::move(data)); }

std::shared_ptr<SampleStore> open_store(const WorkloadConfig& config, const dataset::Entry* entry) {
  if (!config.on_disk()) return memory_store(make_dataset(config));
  if (entry == nullptr) throw std::invalid_argument("a dataset on disk needs its cache entry");
  if (config.storage == Storage::files) return std::make_shared<FileStore>(*entry);
  return std::make_shared<ShardStore>(*entry);
}

nlohmann::json StorageReport::to_json(const WorkloadConfig& config) const {
  nlohmann::json epochs_json = nlohmann::json::array();
  for (const auto& e : epochs)
    epochs_json.push_back(
        {{"epoch", e.epoch}, {"resident_pages", e.before.resident_pages}, {"total_pages", e.before.total_pages}});
  nlohmann::json j = {{"storage", storage_name(config.storage)},
                      {"format", format_name(config.format)},
                      {"page_cache", page_cache_name(config.page_cache)},
                      {"dir", entry.dir},
                      {"key", entry.layout.key()},
                      {"files", entry.files.size()},
                      {"bytes", entry.bytes},
                      {"written_now", entry.written_now},
                      {"write_s", entry.write_s},
                      {"device", device.to_json()},
                      {"page_size", sysconf(_SC_PAGESIZE)},
                      {"epochs", epochs_json}};
  if (config.format == SampleFormat::jpeg) j["image_size"] = config.image_size;
  return j;
}

Result<page_cache::Residency> settle_page_cache(const WorkloadConfig& config, const dataset::Entry& entry,
                                                bool first_measured) {
  const std::vector<std::string> paths = entry.paths();
  if (config.page_cache == PageCache::cold) {
    if (Status s = page_cache::evict(paths); !s) return s.error();
  } else if (first_measured) {
    if (Status s = page_cache::read_all(paths); !s) return s.error();
  }
  return page_cache::residency(paths);
}

namespace {
volatile sig_atomic_t g_prepare_stop = 0;
}  // namespace

int prepare_dataset_main(const std::string& config_json, const std::string& report_path) {
  // The error goes into the report too: the harness runs this program with stderr closed.
  const auto fail_with = [&](const Error& e) {
    std::fprintf(stderr, "ingero-bench workload: %s\n", e.message.c_str());
    if (!e.hint.empty()) std::fprintf(stderr, "  fix: %s\n", e.hint.c_str());
    PreparationReport failed;
    failed.error = e.message;
    failed.hint = e.hint;
    (void)write_file_atomically(report_path, failed.to_json().dump());  // the exit code says it failed all the same
    return e.exit_code;
  };
  // Ctrl-C while writing: the partial folder is removed before exiting.
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_prepare_stop = 1; };
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(sig, &sa, nullptr);
  const nlohmann::json parsed = parse_json_or_discarded(config_json);
  if (parsed.is_discarded()) return fail_with(Error::bad_input("the workload configuration is not JSON"));
  auto config = config_from_json(parsed);
  if (!config) return fail_with(config.error());
  if (Status s = validate(*config); !s) return fail_with(s.error());
  if (!config->on_disk()) return 0;
  Result<dataset::Entry> entry = Error::failure("the dataset was not prepared");
  Result<page_cache::BlockDevice> device = Error::failure("the device was not measured");
  try {
    entry = prepare_dataset(*config, [] { return g_prepare_stop != 0; });
    if (!entry) return fail_with(entry.error());
    const std::vector<std::string> probe =
        config->storage == Storage::shards ? entry->paths() : std::vector<std::string>{};
    device = page_cache::block_device(config->dataset_cache_dir(), probe);
  } catch (const std::exception& e) {  // a bug, reported as one: not an abort the harness cannot name
    return fail_with(Error::failure(fmt::format("preparing the dataset in {}: {}", config->dataset_cache_dir(),
                                                e.what())));
  }
  if (!device) return fail_with(device.error());
  PreparationReport report;
  report.key = entry->layout.key();
  report.dir = entry->dir;
  report.written_now = entry->written_now;
  report.write_s = entry->write_s;
  report.device_name = device->name;
  report.device_maj_min = device->maj_min;
  report.device_seq_read_mb_s = device->seq_read_mb_s;
  report.device_how = device->how;
  if (Status s = write_file_atomically(report_path, report.to_json().dump()); !s) return fail_with(s.error());
  return 0;
}

}  // namespace ingero::workloads

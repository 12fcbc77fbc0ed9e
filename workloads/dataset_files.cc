// SPDX-License-Identifier: Apache-2.0
#include "workloads/dataset_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/json_text.h"
#include "common/unique_fd.h"

namespace ingero::workloads::dataset {

namespace {

namespace fs = std::filesystem;

uint32_t crc_of(std::string_view payload) {
  return static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size())));
}

// A write that failed: errno's text, and for a full disk the two ways out.
Error write_error(const std::string& what, const std::string& folder, int err) {
  const bool full = err == ENOSPC || err == EDQUOT;
  return Error::failure(fmt::format("writing the dataset into {} failed: {}: {}", folder, what, std::strerror(err)),
                        full ? fmt::format("free space on the filesystem of {}, or pass --dataset-cache DIR on "
                                           "another filesystem",
                                           fs::path(folder).parent_path().string())
                             : "check the folder's permissions, or pass --dataset-cache DIR");
}

Status write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::failure(std::strerror(errno));
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

// Writes one file of the entry; errors carry errno for write_error.
class EntryWriter {
 public:
  explicit EntryWriter(std::string folder) : folder_(std::move(folder)) {}

  Status create(const std::string& relative, std::string_view bytes) {
    if (Status s = open(relative); !s) return s;
    if (Status s = append(bytes); !s) return s;
    return close();
  }
  Status open(const std::string& relative) {
    current_ = relative;
    const fs::path path = fs::path(folder_) / relative;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) return write_error("creating " + path.parent_path().string(), folder_, ec.value());
    fd_.reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!fd_) return write_error("creating " + relative, folder_, errno);
    bytes_ = 0;
    return {};
  }
  Status append(std::string_view bytes) {
    if (Status s = write_all(fd_.get(), bytes); !s) return write_error("writing " + current_, folder_, errno);
    bytes_ += static_cast<int64_t>(bytes.size());
    return {};
  }
  // close() reports what a delayed write-back could not store (NFS, quota).
  Status close() {
    const int fd = fd_.release();
    if (::close(fd) != 0) return write_error("closing " + current_, folder_, errno);
    files_.push_back(StoredFile{current_, bytes_});
    return {};
  }
  std::vector<StoredFile>& files() { return files_; }

 private:
  std::string folder_;
  std::string current_;
  UniqueFd fd_;
  int64_t bytes_ = 0;
  std::vector<StoredFile> files_;
};

nlohmann::json manifest_json(const Layout& layout, const std::vector<StoredFile>& files) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& f : files) list.push_back({f.path, f.bytes});
  return {{"schema", "ingero-bench/dataset"}, {"layout", layout.to_json()}, {"files", list}};
}

Status write_entry(const Layout& layout, const std::string& folder, const PayloadOf& payload_of,
                   const std::function<bool()>& stop, std::vector<StoredFile>* files) {
  EntryWriter writer(folder);
  const auto interrupted = [&] {
    return Error::failure(fmt::format("interrupted while writing the dataset into {}; nothing was kept", folder));
  };
  if (layout.storage == Storage::files) {
    for (int64_t i = 0; i < layout.samples; ++i) {
      if (stop && stop()) return interrupted();
      if (Status s = writer.create(sample_file(i), encode_record(i, payload_of(i))); !s) return s;
    }
  } else {
    const int64_t per_shard = layout.shard_samples();
    std::string index;
    index.reserve(static_cast<size_t>(layout.samples) * 8);
    for (int64_t shard = 0; shard * per_shard < layout.samples; ++shard) {
      if (Status s = writer.open(shard_file(shard)); !s) return s;
      uint64_t offset = 0;
      for (int64_t i = shard * per_shard; i < std::min(layout.samples, (shard + 1) * per_shard); ++i) {
        if (stop && stop()) return interrupted();
        const std::string record = encode_record(i, payload_of(i));
        index.append(reinterpret_cast<const char*>(&offset), sizeof(offset));
        if (Status s = writer.append(record); !s) return s;
        offset += record.size();
      }
      if (Status s = writer.close(); !s) return s;
    }
    if (Status s = writer.create(kIndexFile, index); !s) return s;
  }
  *files = writer.files();
  // The manifest is written last: an entry without one was never finished.
  return writer.create(kManifestFile, manifest_json(layout, *files).dump());
}

// syncfs flushes every file of the entry in one call (one fsync per file costs a disk flush each:
// minutes for 100,000 files); then the folder itself, so the rename that follows names durable data.
Status sync_folder(const std::string& folder) {
  UniqueFd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return write_error("opening the folder to sync it", folder, errno);
  if (::syncfs(dir.get()) != 0) return write_error("syncfs", folder, errno);
  if (::fsync(dir.get()) != 0) return write_error("fsync of the folder", folder, errno);
  return {};
}

Error damaged(const std::string& dir, const std::string& what) {
  return Error::failure(fmt::format("the dataset cache entry {} is damaged: {}", dir, what),
                        fmt::format("remove {} (the next run writes it again)", dir));
}

// The manifest of an existing entry, checked against the layout asked for and every file's size.
Result<Entry> open_existing(const Layout& layout, const std::string& dir) {
  auto text = read_file(dir + "/" + kManifestFile);
  if (!text) return damaged(dir, "its manifest.json cannot be read");
  const nlohmann::json manifest = parse_json_or_discarded(*text);
  if (manifest.is_discarded() || !manifest.contains("files") || !manifest.contains("layout"))
    return damaged(dir, "its manifest.json is not a dataset manifest");
  if (manifest["layout"] != layout.to_json())
    return damaged(dir, fmt::format("its manifest describes {}, not {}", manifest["layout"].dump(), layout.to_json().dump()));
  Entry entry;
  entry.layout = layout;
  entry.dir = dir;
  for (const auto& f : manifest["files"]) {
    StoredFile file{f.at(0).get<std::string>(), f.at(1).get<int64_t>()};
    struct stat st {};
    const std::string path = entry.path(file);
    if (::stat(path.c_str(), &st) != 0) return damaged(dir, fmt::format("{} is missing", path));
    if (st.st_size != file.bytes)
      return damaged(dir, fmt::format("{} has {} bytes, its manifest says {} (truncated or overwritten)", path,
                                      st.st_size, file.bytes));
    entry.bytes += file.bytes;
    entry.files.push_back(std::move(file));
  }
  const size_t expected = layout.storage == Storage::files
                              ? static_cast<size_t>(layout.samples)
                              : static_cast<size_t>((layout.samples + layout.shard_samples() - 1) / layout.shard_samples()) + 1;
  if (entry.files.size() != expected)
    return damaged(dir, fmt::format("its manifest lists {} files, the layout has {}", entry.files.size(), expected));
  return entry;
}

}  // namespace

std::string Layout::key() const {
  const std::string what = format == SampleFormat::jpeg ? fmt::format("jpeg{}-q{}-{}", image_size, kJpegQuality, samples)
                                                         : fmt::format("raw-{}x{}", samples, features);
  return fmt::format("{}-{}-seed{}-v{}", storage_name(storage), what, seed, kLayoutVersion);
}

int64_t Layout::shard_samples() const {
  const int64_t record = static_cast<int64_t>(sizeof(RecordHeader)) +
                         (format == SampleFormat::jpeg ? features / 4 : features * 4);  // JPEG: a rough size
  const int64_t shards = std::clamp((samples * record + kShardTargetBytes - 1) / kShardTargetBytes, kMinShards, kMaxShards);
  return std::max<int64_t>(1, (samples + shards - 1) / shards);
}

nlohmann::json Layout::to_json() const {
  return {{"storage", storage_name(storage)}, {"format", format_name(format)}, {"samples", samples},
          {"features", features},             {"image_size", image_size},      {"seed", seed},
          {"jpeg_quality", format == SampleFormat::jpeg ? kJpegQuality : 0},  {"layout_version", kLayoutVersion},
          {"shard_samples", storage == Storage::shards ? shard_samples() : 0}};
}

Layout layout_of(const WorkloadConfig& c) {
  return Layout{c.storage, c.format, c.samples, c.features, c.format == SampleFormat::jpeg ? c.image_size : 0, c.seed};
}

std::string encode_record(int64_t index, std::string_view payload) {
  RecordHeader h;
  h.payload_bytes = static_cast<uint32_t>(payload.size());
  h.index = static_cast<uint64_t>(index);
  h.crc32 = crc_of(payload);
  std::string out(reinterpret_cast<const char*>(&h), sizeof(h));
  out.append(payload);
  return out;
}

Result<std::string_view> check_record(std::string_view bytes, int64_t index, const std::string& file) {
  const auto bad = [&](const std::string& what) {
    return Error::failure(fmt::format("sample {} in {}: {}", index, file, what),
                          "the dataset cache is damaged: remove its folder (the next run writes it again)");
  };
  RecordHeader h;
  if (bytes.size() < sizeof(h)) return bad(fmt::format("truncated record ({} bytes, the header alone is {})", bytes.size(), sizeof(h)));
  std::memcpy(&h, bytes.data(), sizeof(h));
  if (h.magic != kRecordMagic) return bad(fmt::format("bad magic {:#x} (not a dataset record)", h.magic));
  if (h.index != static_cast<uint64_t>(index)) return bad(fmt::format("the record holds sample {}", h.index));
  const std::string_view payload = bytes.substr(sizeof(h));
  if (payload.size() != h.payload_bytes)
    return bad(fmt::format("truncated record: {} payload bytes, the header says {}", payload.size(), h.payload_bytes));
  if (crc_of(payload) != h.crc32) return bad("crc32 mismatch (a corrupted byte)");
  return payload;
}

std::string sample_file(int64_t index) { return fmt::format("d{:04}/{:08}.rec", index / kFilesPerFolder, index); }
std::string shard_file(int64_t shard) { return fmt::format("shard-{:03}.bin", shard); }

std::vector<std::string> Entry::paths() const {
  std::vector<std::string> out;
  out.reserve(files.size());
  for (const auto& f : files) out.push_back(path(f));
  return out;
}

Result<Entry> open_or_write(const Layout& layout, const std::string& cache_dir,
                            const std::function<PayloadOf()>& make_payloads, const std::function<bool()>& stop) {
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec)
    return Error::bad_input(fmt::format("the dataset cache folder {} cannot be created: {}", cache_dir, ec.message()),
                            "pass --dataset-cache DIR (a folder this user can write)");
  remove_stale_entries(cache_dir, ".partial-");  // <key>.partial-<pid> whose writer is gone
  const std::string dir = cache_dir + "/" + layout.key();
  if (fs::exists(dir, ec)) return open_existing(layout, dir);

  const std::string partial = fmt::format("{}.partial-{}", dir, ::getpid());
  fs::remove_all(partial, ec);
  const auto start = std::chrono::steady_clock::now();
  std::vector<StoredFile> files;
  Status written = write_entry(layout, partial, make_payloads(), stop, &files);
  if (written) written = sync_folder(partial);
  if (written && ::rename(partial.c_str(), dir.c_str()) != 0) {
    // Another writer finished the same entry first: theirs is as good as ours.
    if (errno != EEXIST && errno != ENOTEMPTY) written = write_error("renaming it into place", partial, errno);
  }
  fs::remove_all(partial, ec);  // a failed write, or the copy another writer made redundant
  if (!written) return written.error();
  if (Status s = sync_folder(cache_dir); !s) return s.error();
  auto entry = open_existing(layout, dir);
  if (!entry) return entry;
  entry->written_now = true;
  entry->write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return entry;
}

Result<std::vector<uint64_t>> read_shard_index(const Entry& entry) {
  auto text = read_file(entry.dir + "/" + kIndexFile);
  if (!text) return damaged(entry.dir, "its index.bin cannot be read");
  if (text->size() != static_cast<size_t>(entry.layout.samples) * 8)
    return damaged(entry.dir, fmt::format("{}/{} has {} bytes, {} samples need {}", entry.dir, kIndexFile, text->size(),
                                          entry.layout.samples, entry.layout.samples * 8));
  std::vector<uint64_t> offsets(static_cast<size_t>(entry.layout.samples));
  std::memcpy(offsets.data(), text->data(), text->size());
  return offsets;
}

}  // namespace ingero::workloads::dataset

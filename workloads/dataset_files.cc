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
#include "common/proc_files.h"
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

// Writes the files of the entry, all through the descriptor of its partial folder (and of the
// one sub-folder being filled), opened O_NOFOLLOW: a folder swapped for a link after it was made
// cannot send a write elsewhere. Errors carry errno for write_error.
class EntryWriter {
 public:
  EntryWriter(int folder_fd, std::string folder) : folder_fd_(folder_fd), folder_(std::move(folder)) {}

  Status create(const std::string& relative, std::string_view bytes) {
    if (Status s = open(relative); !s) return s;
    if (Status s = append(bytes); !s) return s;
    return close();
  }
  Status open(const std::string& relative) {
    current_ = relative;
    const size_t slash = relative.rfind('/');
    int at = folder_fd_;
    if (slash != std::string::npos) {
      if (Status s = enter_subfolder(relative.substr(0, slash)); !s) return s;
      at = sub_fd_.get();
    }
    const std::string name = slash == std::string::npos ? relative : relative.substr(slash + 1);
    fd_.reset(::openat(at, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
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
  // The sub-folder (one level: d0000) the next files go into, made here when new.
  Status enter_subfolder(const std::string& name) {
    if (sub_fd_ && name == sub_name_) return {};
    if (::mkdirat(folder_fd_, name.c_str(), 0755) != 0 && errno != EEXIST)
      return write_error("creating " + name, folder_, errno);
    sub_fd_.reset(::openat(folder_fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub_fd_) return write_error("opening " + name, folder_, errno);
    sub_name_ = name;
    return {};
  }

  int folder_fd_;
  std::string folder_;
  UniqueFd sub_fd_;
  std::string sub_name_;
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

Status write_entry(const Layout& layout, int folder_fd, const std::string& folder, const PayloadOf& payload_of,
                   const std::function<bool()>& stop, std::vector<StoredFile>* files) {
  EntryWriter writer(folder_fd, folder);
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
Status sync_folder(int dir, const std::string& folder) {
  if (::syncfs(dir) != 0) return write_error("syncfs", folder, errno);
  if (::fsync(dir) != 0) return write_error("fsync of the folder", folder, errno);
  return {};
}

Error damaged(const std::string& dir, const std::string& what) {
  return Error::failure(fmt::format("the dataset cache entry {} is damaged: {}", dir, what),
                        fmt::format("remove {} (the next run writes it again)", dir));
}

// The name the layout gives the i-th file of its manifest: the manifest is trusted for sizes only.
std::string expected_file(const Layout& layout, size_t i, size_t count) {
  if (layout.storage == Storage::files) return sample_file(static_cast<int64_t>(i));
  return i + 1 == count ? kIndexFile : shard_file(static_cast<int64_t>(i));
}

// A manifest name that could reach outside its entry: absolute, or with a ".." part.
bool escapes_entry(const std::string& name) {
  if (name.empty() || name.front() == '/') return true;
  for (const auto& part : fs::path(name))
    if (part == "..") return true;
  return false;
}

// The manifest's ["name", bytes] pairs, each of the right JSON type.
Result<std::vector<StoredFile>> manifest_files(const nlohmann::json& manifest, const std::string& dir) {
  const nlohmann::json& list = manifest["files"];
  if (!list.is_array()) return damaged(dir, "its manifest.json's \"files\" is not a list");
  std::vector<StoredFile> files;
  for (const auto& f : list) {
    if (!f.is_array() || f.size() != 2 || !f[0].is_string() || !f[1].is_number_integer())
      return damaged(dir, fmt::format("its manifest.json lists {}, not [\"name\", bytes]", f.dump()));
    files.push_back(StoredFile{f[0].get<std::string>(), f[1].get<int64_t>()});
  }
  return files;
}

// The manifest of an existing entry, checked against the layout asked for and every file's name,
// kind and size. Every file must be a regular file inside the entry: a manifest or a folder that
// another user changed cannot make the run read elsewhere (../x) or hang (/dev/zero, a FIFO).
Result<Entry> open_existing(const Layout& layout, const std::string& dir) {
  struct stat dir_st {};
  if (::lstat(dir.c_str(), &dir_st) != 0 || !S_ISDIR(dir_st.st_mode))
    return damaged(dir, "it is not a folder (a symbolic link or another kind of file)");
  auto manifest_fd = open_regular_file(dir + "/" + kManifestFile);
  if (!manifest_fd) return damaged(dir, "its manifest.json cannot be read: " + manifest_fd.error().message);
  const auto text = proc::read_all(manifest_fd->get());
  if (!text) return damaged(dir, "its manifest.json cannot be read");
  const nlohmann::json manifest = parse_json_or_discarded(*text);
  if (!manifest.is_object() || !manifest.contains("files") || !manifest.contains("layout"))
    return damaged(dir, "its manifest.json is not a dataset manifest");
  if (manifest["layout"] != layout.to_json())
    return damaged(dir, fmt::format("its manifest describes {}, not {}", manifest["layout"].dump(), layout.to_json().dump()));
  auto files = manifest_files(manifest, dir);
  if (!files) return files.error();
  const size_t expected = layout.storage == Storage::files
                              ? static_cast<size_t>(layout.samples)
                              : static_cast<size_t>((layout.samples + layout.shard_samples() - 1) / layout.shard_samples()) + 1;
  if (files->size() != expected)
    return damaged(dir, fmt::format("its manifest lists {} files, the layout has {}", files->size(), expected));
  Entry entry;
  entry.layout = layout;
  entry.dir = dir;
  std::string checked_folder;
  for (size_t i = 0; i < files->size(); ++i) {
    StoredFile& file = (*files)[i];
    if (escapes_entry(file.path))
      return damaged(dir, fmt::format("its manifest names {}, outside the entry", file.path));
    if (file.path != expected_file(layout, i, files->size()))
      return damaged(dir, fmt::format("its manifest names {} where the layout has {}", file.path,
                                      expected_file(layout, i, files->size())));
    const std::string path = entry.path(file);
    struct stat st {};
    // The sub-folder (d0000) too must be a folder, not a link out of the entry.
    const std::string folder = fs::path(path).parent_path().string();
    if (folder != checked_folder) {
      if (::lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return damaged(dir, fmt::format("{} is not a folder", folder));
      checked_folder = folder;
    }
    if (::lstat(path.c_str(), &st) != 0) return damaged(dir, fmt::format("{} is missing", path));
    if (!S_ISREG(st.st_mode))
      return damaged(dir, fmt::format("{} is not a regular file (a symbolic link, a device or a FIFO)", path));
    if (st.st_size != file.bytes)
      return damaged(dir, fmt::format("{} has {} bytes, its manifest says {} (truncated or overwritten)", path,
                                      st.st_size, file.bytes));
    entry.bytes += file.bytes;
    entry.files.push_back(std::move(file));
  }
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
  // Another user who can change the cache folder could swap what root writes or reads there.
  if (Status s = check_folder_not_shared("--dataset-cache", cache_dir); !s) return s.error();
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec)
    return Error::bad_input(fmt::format("the dataset cache folder {} cannot be created: {}", cache_dir, ec.message()),
                            "pass --dataset-cache DIR (a folder this user can write)");
  UniqueFd cache(::open(cache_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!cache)
    return Error::bad_input(fmt::format("the dataset cache folder {} cannot be opened: {}", cache_dir,
                                        std::strerror(errno)),
                            "pass --dataset-cache DIR (a folder this user can write)");
  remove_stale_entries(cache_dir, ".partial-");  // <key>.partial-<pid> whose writer is gone
  const std::string key = layout.key();
  const std::string dir = cache_dir + "/" + key;
  struct stat st {};
  if (::fstatat(cache.get(), key.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return open_existing(layout, dir);

  const std::string partial_name = fmt::format("{}.partial-{}", key, ::getpid());
  const std::string partial = cache_dir + "/" + partial_name;
  fs::remove_all(partial, ec);  // a link is removed itself
  const auto start = std::chrono::steady_clock::now();
  std::vector<StoredFile> files;
  Status written;
  UniqueFd folder;
  if (::mkdirat(cache.get(), partial_name.c_str(), 0755) != 0) {
    written = write_error("creating the folder", partial, errno);
  } else {
    folder.reset(::openat(cache.get(), partial_name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!folder) written = write_error("opening the folder", partial, errno);
  }
  if (written) written = write_entry(layout, folder.get(), partial, make_payloads(), stop, &files);
  if (written) written = sync_folder(folder.get(), partial);
  if (written && ::renameat(cache.get(), partial_name.c_str(), cache.get(), key.c_str()) != 0) {
    // Another writer finished the same entry first: theirs is as good as ours.
    if (errno != EEXIST && errno != ENOTEMPTY) written = write_error("renaming it into place", partial, errno);
  }
  folder.reset();
  fs::remove_all(partial, ec);  // a failed write, or the copy another writer made redundant
  if (!written) return written.error();
  if (::fsync(cache.get()) != 0) return write_error("fsync of the folder", cache_dir, errno);
  auto entry = open_existing(layout, dir);
  if (!entry) return entry;
  entry->written_now = true;
  entry->write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return entry;
}

Result<std::vector<uint64_t>> read_shard_index(const Entry& entry) {
  const std::string path = entry.dir + "/" + kIndexFile;
  auto fd = open_regular_file(path);
  if (!fd) return damaged(entry.dir, "its index.bin cannot be read: " + fd.error().message);
  const size_t expected = static_cast<size_t>(entry.layout.samples) * 8;
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0 || static_cast<size_t>(st.st_size) != expected)
    return damaged(entry.dir, fmt::format("{} has {} bytes, {} samples need {}", path, st.st_size,
                                          entry.layout.samples, expected));
  std::vector<uint64_t> offsets(static_cast<size_t>(entry.layout.samples));
  size_t done = 0;
  auto* bytes = reinterpret_cast<char*>(offsets.data());
  while (done < expected) {
    const ssize_t n = ::pread(fd->get(), bytes + done, expected - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return damaged(entry.dir, fmt::format("{} cannot be read whole", path));
    done += static_cast<size_t>(n);
  }
  return offsets;
}

}  // namespace ingero::workloads::dataset

// SPDX-License-Identifier: Apache-2.0
// The on-disk datasets (--storage files|shards): their cache key, record layout, manifest, the
// atomic write of a cache entry and its checks on reuse. No LibTorch here: what a sample's payload
// is comes from the caller (workloads/sample_store.cc).
//
// A cache entry is the folder <cache>/<key>:
//   files:  d0000/00000000.rec ... (at most kFilesPerFolder files per folder), one record per sample
//   shards: shard-000.bin ... (records back to back) and index.bin (one little-endian u64 per sample:
//           the record's offset in its shard; shard s holds samples [s * shard_samples, ...))
//   manifest.json, written last: the parameters and every file's size
// A record is a RecordHeader followed by the payload (raw float32 row, or JPEG bytes).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "workloads/config.h"

namespace ingero::workloads::dataset {

inline constexpr uint32_t kRecordMagic = 0x31534249;  // "IBS1" little-endian
inline constexpr int kLayoutVersion = 1;              // part of the key: a new layout never reads an old entry
inline constexpr int64_t kFilesPerFolder = 10'000;
inline constexpr int kJpegQuality = 90;
inline constexpr int64_t kShardTargetBytes = 256ll << 20;
inline constexpr int64_t kMinShards = 4, kMaxShards = 16;

struct RecordHeader {
  uint32_t magic = kRecordMagic;
  uint32_t payload_bytes = 0;
  uint64_t index = 0;   // the sample this record holds
  uint32_t crc32 = 0;   // zlib crc32 of the payload
  uint32_t reserved = 0;
};
static_assert(sizeof(RecordHeader) == 24, "the record header is part of the on-disk layout");

// What identifies a dataset on disk: every parameter its bytes depend on.
struct Layout {
  Storage storage = Storage::files;
  SampleFormat format = SampleFormat::raw;
  int64_t samples = 0;
  int64_t features = 0;
  int64_t image_size = 0;
  uint64_t seed = 0;
  std::string key() const;  // e.g. "files-raw-100000x100-seed0-v1", "shards-jpeg32-q90-100000-seed0-v1"
  int64_t shard_samples() const;  // samples per shard (shards only)
  nlohmann::json to_json() const;
};
Layout layout_of(const WorkloadConfig& config);

// One sample's record: header + payload.
std::string encode_record(int64_t index, std::string_view payload);
// Checks the record of sample `index` read from `file` (magic, index, length, crc) and returns its
// payload; every error names the file and the sample.
Result<std::string_view> check_record(std::string_view bytes, int64_t index, const std::string& file);

// The path of sample i's file, relative to the entry (files storage).
std::string sample_file(int64_t index);
std::string shard_file(int64_t shard);
inline constexpr const char* kIndexFile = "index.bin";
inline constexpr const char* kManifestFile = "manifest.json";

struct StoredFile {
  std::string path;  // relative to the entry's folder
  int64_t bytes = 0;
};

// A cache entry ready to read.
struct Entry {
  Layout layout;
  std::string dir;                // <cache>/<key>
  std::vector<StoredFile> files;  // files: one per sample, in sample order; shards: the shards, then index.bin
  int64_t bytes = 0;              // all files together
  bool written_now = false;       // this call wrote it
  double write_s = 0;             // how long writing took (0 when reused)
  std::string path(const StoredFile& f) const { return dir + "/" + f.path; }
  std::vector<std::string> paths() const;
};

// The payload of sample i (raw float32 bytes, or a JPEG); made only when the entry must be written.
using PayloadOf = std::function<std::string(int64_t index)>;

// Opens the entry of `layout` under cache_dir, or writes it (into <key>.partial-<pid>, through that
// folder's O_NOFOLLOW descriptor, fsynced, then renamed) when there is none. A cache folder that
// another user could change is bad input (check_folder_not_shared). On reuse every file must be the
// regular file the layout names, of the size the manifest says. Stale
// partial folders of processes that are gone are removed first. make_payloads is called once, and
// only to write; stop() is polled between samples (Ctrl-C leaves no entry behind).
Result<Entry> open_or_write(const Layout& layout, const std::string& cache_dir,
                            const std::function<PayloadOf()>& make_payloads, const std::function<bool()>& stop);

// Reads a whole shard's u64 offsets (index.bin) and checks its length.
Result<std::vector<uint64_t>> read_shard_index(const Entry& entry);

}  // namespace ingero::workloads::dataset

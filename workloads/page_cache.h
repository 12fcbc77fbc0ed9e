// SPDX-License-Identifier: Apache-2.0
// The page cache of an on-disk dataset (--page-cache cold|warm), without root: eviction with
// posix_fadvise(POSIX_FADV_DONTNEED) per file, residency counted with mincore over a read-only
// mapping of each file; and the sequential read rate of the block device under the cache,
// measured once with O_DIRECT and kept per device in the cache folder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace ingero::workloads::page_cache {

struct Residency {
  int64_t resident_pages = 0;
  int64_t total_pages = 0;
};

Result<Residency> residency(const std::vector<std::string>& paths);
// After an eviction: empty when it held, else the note that the page cache could not be made cold
// (more than half the pages stayed resident: tmpfs and ramfs keep files only in memory).
std::string cold_not_held_note(const Residency& after_evict, const std::string& cache_dir);
Status evict(const std::vector<std::string>& paths);
Status read_all(const std::vector<std::string>& paths);  // warm: every byte read once

inline constexpr int64_t kSeqReadProbeBytes = 256ll << 20;

struct BlockDevice {
  std::string name;          // e.g. "vda" (from /sys/dev/block/MAJ:MIN); empty without a block device
  std::string maj_min;       // st_dev of the cache folder, "254:0"
  std::optional<double> seq_read_mb_s;  // null: no block device to measure (tmpfs, overlay, btrfs)
  std::string how;           // how it was measured, or why it was not
  nlohmann::json to_json() const;
};

// The device holding cache_dir, its sequential read rate measured once (O_DIRECT, 1 MiB reads of
// kSeqReadProbeBytes from probe_files when they hold that much, else from a file written for it in
// cache_dir and removed after) and kept in cache_dir/device-MAJ-MIN.json for later runs.
Result<BlockDevice> block_device(const std::string& cache_dir, const std::vector<std::string>& probe_files);

}  // namespace ingero::workloads::page_cache

// SPDX-License-Identifier: Apache-2.0
#include "workloads/page_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/json_text.h"
#include "common/proc_files.h"
#include "common/unique_fd.h"

namespace ingero::workloads::page_cache {

namespace {

namespace fs = std::filesystem;

const int64_t kPage = sysconf(_SC_PAGESIZE);

Error file_error(const char* what, const std::string& path) {
  return Error::failure(fmt::format("{} {}: {}", what, path, std::strerror(errno)));
}

// A read-only mapping of a file, unmapped by its owner.
class Mapping {
 public:
  Mapping(void* addr, size_t bytes) : addr_(addr), bytes_(bytes) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (addr_ != MAP_FAILED) munmap(addr_, bytes_);
  }
  void* addr() const { return addr_; }
  bool ok() const { return addr_ != MAP_FAILED; }

 private:
  void* addr_;
  size_t bytes_;
};

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

// O_DIRECT reads in 1 MiB pieces, across files, until `limit` bytes: MB/s.
Result<double> direct_read_rate(const std::vector<std::string>& files, int64_t limit) {
  constexpr size_t kChunk = 1 << 20;
  void* raw = nullptr;
  if (posix_memalign(&raw, 4096, kChunk) != 0) return Error::failure("no memory for the O_DIRECT buffer");
  std::unique_ptr<void, AlignedFree> buffer(raw);
  int64_t done = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const auto& path : files) {
    auto fd = open_regular_file(path, O_DIRECT);
    if (!fd) return fd.error();
    for (;;) {
      const ssize_t n = ::read(fd->get(), buffer.get(), kChunk);
      if (n < 0) return file_error("O_DIRECT read of", path);
      done += n;
      if (n < static_cast<ssize_t>(kChunk) || done >= limit) break;
    }
    if (done >= limit) break;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (done == 0 || seconds <= 0) return Error::failure("the O_DIRECT probe read nothing");
  return static_cast<double>(done) / seconds / 1e6;
}

int64_t total_bytes(const std::vector<std::string>& files) {
  int64_t sum = 0;
  for (const auto& f : files) {
    struct stat st {};
    if (::stat(f.c_str(), &st) == 0) sum += st.st_size;
  }
  return sum;
}

// Fills the probe file with incompressible bytes, on the cache's device, to read back with O_DIRECT.
Status write_probe_file(int fd, const std::string& path, int64_t bytes) {
  std::vector<uint64_t> block(1 << 17);  // 1 MiB
  std::mt19937_64 rng(42);
  for (int64_t written = 0; written < bytes; written += 1 << 20) {
    for (auto& w : block) w = rng();
    if (::write(fd, block.data(), 1 << 20) != 1 << 20) return file_error("writing", path);
  }
  if (::fsync(fd) != 0) return file_error("fsync of", path);
  return {};
}

Result<BlockDevice> measure(BlockDevice device, const std::string& cache_dir, const std::vector<std::string>& probe_files) {
  if (total_bytes(probe_files) >= kSeqReadProbeBytes) {
    auto rate = direct_read_rate(probe_files, kSeqReadProbeBytes);
    if (!rate) return rate.error();
    device.seq_read_mb_s = *rate;
    device.how = fmt::format("O_DIRECT sequential 1 MiB reads of {} MiB of the dataset's own files",
                             kSeqReadProbeBytes >> 20);
    return device;
  }
  // A new file made by mkstemp (O_EXCL): a name planted beforehand, a link above all, is never opened.
  std::string probe = fmt::format("{}/.seq-read-probe-{}-XXXXXX", cache_dir, ::getpid());
  UniqueFd fd(::mkostemp(probe.data(), O_CLOEXEC));
  if (!fd) return file_error("creating a file in", cache_dir);
  Status written = write_probe_file(fd.get(), probe, kSeqReadProbeBytes);
  fd.reset();
  Result<double> rate = written ? direct_read_rate({probe}, kSeqReadProbeBytes) : Result<double>(written.error());
  ::unlink(probe.c_str());
  if (!rate) return rate.error();
  device.seq_read_mb_s = *rate;
  device.how = fmt::format("O_DIRECT sequential 1 MiB reads of a {} MiB file written for it in the cache folder",
                           kSeqReadProbeBytes >> 20);
  return device;
}

}  // namespace

Result<Residency> residency(const std::vector<std::string>& paths) {
  Residency r;
  std::vector<unsigned char> vec;
  for (const auto& path : paths) {
    auto opened = open_regular_file(path);
    if (!opened) return opened.error();
    const UniqueFd fd = std::move(*opened);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return file_error("stat of", path);
    if (st.st_size == 0) continue;
    const auto bytes = static_cast<size_t>(st.st_size);
    const int64_t pages = (st.st_size + kPage - 1) / kPage;
    Mapping map(::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd.get(), 0), bytes);
    if (!map.ok()) return file_error("mmap of", path);
    vec.resize(static_cast<size_t>(pages));
    if (::mincore(map.addr(), bytes, vec.data()) != 0) return file_error("mincore of", path);
    for (unsigned char v : vec) r.resident_pages += v & 1;
    r.total_pages += pages;
  }
  return r;
}

std::string cold_not_held_note(const Residency& after_evict, const std::string& cache_dir) {
  if (after_evict.total_pages == 0 || after_evict.resident_pages * 2 <= after_evict.total_pages) return {};
  struct statfs where {};
  const bool in_memory = ::statfs(cache_dir.c_str(), &where) == 0 &&
                         (where.f_type == TMPFS_MAGIC || where.f_type == RAMFS_MAGIC);
  return fmt::format("--page-cache cold: {} of {} pages stayed resident after eviction{}; the page cache could not "
                     "be made cold there, and the epochs read from memory (put --dataset-cache on a disk for cold "
                     "reads)",
                     after_evict.resident_pages, after_evict.total_pages,
                     in_memory ? fmt::format(" ({} is on tmpfs or ramfs, which keep files only in memory)", cache_dir)
                               : "");
}

Status evict(const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    auto opened = open_regular_file(path);
    if (!opened) return opened.error();
    const UniqueFd fd = std::move(*opened);
    if (const int err = ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED); err != 0) {
      errno = err;
      return file_error("posix_fadvise(DONTNEED) of", path);
    }
  }
  return {};
}

Status read_all(const std::vector<std::string>& paths) {
  std::vector<char> buffer(1 << 20);
  for (const auto& path : paths) {
    auto opened = open_regular_file(path);
    if (!opened) return opened.error();
    const UniqueFd fd = std::move(*opened);
    for (;;) {
      const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return file_error("reading", path);
      if (n == 0) break;
    }
  }
  return {};
}

nlohmann::json BlockDevice::to_json() const {
  return {{"name", name.empty() ? nlohmann::json() : nlohmann::json(name)},
          {"maj_min", maj_min},
          {"seq_read_mb_s", seq_read_mb_s ? nlohmann::json(*seq_read_mb_s) : nlohmann::json()},
          {"how", how}};
}

Result<BlockDevice> block_device(const std::string& cache_dir, const std::vector<std::string>& probe_files) {
  struct stat st {};
  if (::stat(cache_dir.c_str(), &st) != 0) return file_error("stat of", cache_dir);
  BlockDevice device;
  device.maj_min = fmt::format("{}:{}", major(st.st_dev), minor(st.st_dev));
  const std::string cached = fmt::format("{}/device-{}-{}.json", cache_dir, major(st.st_dev), minor(st.st_dev));
  auto kept = open_regular_file(cached);
  if (auto text = kept ? proc::read_all(kept->get()) : std::nullopt) {
    const nlohmann::json j = parse_json_or_discarded(*text);
    // Any other shape (a damaged file) is measured again and replaced.
    const auto string_at = [&](const char* key) {
      return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
    };
    if (string_at("maj_min") == device.maj_min) {
      device.name = string_at("name");
      if (j.contains("seq_read_mb_s") && j["seq_read_mb_s"].is_number())
        device.seq_read_mb_s = j["seq_read_mb_s"].get<double>();
      device.how = string_at("how") + " (measured once, kept in " + cached + ")";
      return device;
    }
  }
  std::error_code ec;
  const fs::path sys = fs::path("/sys/dev/block") / device.maj_min;
  const fs::path real = fs::canonical(sys, ec);
  if (ec) {
    // No figure is made up: a virtual filesystem has no one device whose rate would be the cache's.
    device.how = fmt::format("no block device: st_dev {} has no {} (tmpfs, overlay, btrfs or another virtual "
                             "filesystem)",
                             device.maj_min, sys.string());
  } else {
    device.name = real.filename().string();
    auto measured = measure(device, cache_dir, probe_files);
    if (!measured) return measured.error();
    device = *measured;
  }
  if (Status s = write_file_atomically(cached, device.to_json().dump()); !s) return s.error();
  return device;
}

}  // namespace ingero::workloads::page_cache

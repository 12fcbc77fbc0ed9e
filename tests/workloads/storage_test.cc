// SPDX-License-Identifier: Apache-2.0
// On-disk datasets (--storage files|shards): the same rows as in memory, JPEG samples close to the
// generated images, a cache entry reused and keyed by its parameters, damage named by file and
// sample, a full disk that leaves nothing to trust, and cold/warm page caches that are what they say.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "workloads/jpeg_samples.h"
#include "workloads/model.h"
#include "workloads/page_cache.h"
#include "workloads/process_loader.h"
#include "workloads/runner.h"
#include "tests/common/temp_dir.h"
#include "workloads/sample_store.h"

namespace ingero::workloads {
namespace {

namespace fs = std::filesystem;

// A fresh cache folder per test, removed after it.
class StorageTest : public ::testing::Test {
 protected:
  WorkloadConfig config(Storage storage, SampleFormat format = SampleFormat::raw) const {
    WorkloadConfig c;
    c.mode = Mode::direct;
    c.device = "cpu";
    c.samples = 600;  // 4 shards of 150: ranges cross shard boundaries
    c.features = 8;
    c.hidden = 16;
    c.classes = 4;
    c.batch_size = 128;
    c.epochs = 2;
    c.warmup_epochs = 1;
    c.seed = 3;
    c.storage = storage;
    c.format = format;
    if (format == SampleFormat::jpeg) {
      c.image_size = 16;
      c.features = 3 * 16 * 16;
    }
    c.dataset_cache = cache_;
    return c;
  }
  std::shared_ptr<SampleStore> store_of(const WorkloadConfig& c, dataset::Entry* entry) const {
    auto prepared = prepare_dataset(c, {});
    EXPECT_TRUE(prepared) << (prepared ? "" : prepared.error().message);
    *entry = *prepared;
    return open_store(c, entry);
  }
  ingero::testing::TempDir folder_{"ingero-storage-test"};
  const std::string& cache_ = folder_.path();
};

// Resident pages of the files, counted here with mincore independently of page_cache.cc.
int64_t resident_pages(const std::vector<std::string>& paths, int64_t* total) {
  const long page = sysconf(_SC_PAGESIZE);
  int64_t resident = 0;
  *total = 0;
  for (const auto& path : paths) {
    const int fd = open(path.c_str(), O_RDONLY);
    struct stat st {};
    fstat(fd, &st);
    const size_t pages = static_cast<size_t>((st.st_size + page - 1) / page);
    void* map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    std::vector<unsigned char> vec(pages);
    mincore(map, static_cast<size_t>(st.st_size), vec.data());
    for (unsigned char v : vec) resident += v & 1;
    *total += static_cast<int64_t>(pages);
    munmap(map, static_cast<size_t>(st.st_size));
    close(fd);
  }
  return resident;
}

TEST_F(StorageTest, FilesAndShardsHoldTheInMemoryRows) {
  const auto memory = open_store(config(Storage::memory), nullptr);
  const auto idx = torch::tensor({0, 599, 149, 150, 301, 7}, torch::kInt64);
  for (Storage storage : {Storage::files, Storage::shards}) {
    dataset::Entry entry;
    const auto disk = store_of(config(storage), &entry);
    for (bool per_sample : {true, false}) {
      auto want = torch::empty({6, 8});
      auto got = torch::empty({6, 8});
      collate_into(want, *memory, idx, per_sample, 0);
      collate_into(got, *disk, idx, per_sample, 0);
      EXPECT_TRUE(torch::equal(want, got)) << storage_name(storage) << " per_sample " << per_sample;
    }
    // A range across two shard boundaries, read with one pread per shard.
    EXPECT_TRUE(torch::equal(read_range(*disk, 100, 300, 0), memory->tensor().narrow(0, 100, 300))) << storage_name(storage);
  }
}

// The same model outputs from every storage: the runs' checksums agree.
TEST_F(StorageTest, EveryStorageGivesTheSameChecksum) {
  for (Mode mode : {Mode::direct, Mode::loader}) {
    auto c = config(Storage::memory);
    c.mode = mode;
    c.num_workers = mode == Mode::loader ? 2 : 0;
    const double want = run_workload(c).checksum;
    for (Storage storage : {Storage::files, Storage::shards}) {
      c.storage = storage;
      const RunResult r = run_workload(c);
      ASSERT_EQ(r.status, "ok");
      EXPECT_EQ(r.checksum, want) << mode_name(mode) << " " << storage_name(storage);
      EXPECT_EQ(r.samples_per_epoch, 600);
    }
  }
}

TEST_F(StorageTest, JpegDecodesToTheGeneratedImage) {
  dataset::Entry entry;
  const auto c = config(Storage::shards, SampleFormat::jpeg);
  const auto store = store_of(c, &entry);
  EXPECT_EQ(store->features(), 3 * 16 * 16);
  int flipped = 0;
  for (int64_t index : {0, 1, 299, 599}) {
    for (int epoch : {0, 1}) {
      const torch::Tensor row = read_row(*store, index, epoch);
      ASSERT_EQ(row.numel(), 3 * 16 * 16);
      const std::vector<uint8_t> image = jpeg::generate_image(16, c.seed, index);
      const bool flip = jpeg::flips(c.seed, epoch, index);
      flipped += flip;
      // Mean absolute difference in grey levels, against the image mirrored or not.
      const auto error_if = [&](bool mirrored) {
        double error = 0;
        for (int ch = 0; ch < 3; ++ch)
          for (int y = 0; y < 16; ++y)
            for (int x = 0; x < 16; ++x) {
              const float v = row[ch * 256 + y * 16 + x].item<float>() * jpeg::kStd[ch] + jpeg::kMean[ch];
              const int from = mirrored ? 15 - x : x;
              error += std::abs(v * 255.0 - image[static_cast<size_t>((y * 16 + from) * 3 + ch)]);
            }
        return error / (3 * 256);
      };
      // Quality 90 of a smooth image: a few grey levels off on average; the other flip is further off.
      EXPECT_LT(error_if(flip), 6.0) << "sample " << index << " epoch " << epoch;
      EXPECT_LT(error_if(flip), error_if(!flip)) << "sample " << index << " epoch " << epoch;
    }
  }
  EXPECT_GT(flipped, 0);
  EXPECT_LT(flipped, 8);
}

TEST_F(StorageTest, AnEntryIsReusedAndKeyedByItsParameters) {
  auto c = config(Storage::files);
  auto first = prepare_dataset(c, {});
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->written_now);
  EXPECT_EQ(first->files.size(), 600u);
  auto again = prepare_dataset(c, {});
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->written_now);
  EXPECT_EQ(again->dir, first->dir);
  c.seed += 1;
  auto other = prepare_dataset(c, {});
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->written_now);
  EXPECT_NE(other->layout.key(), first->layout.key());
  for (const auto& e : fs::directory_iterator(cache_))
    EXPECT_EQ(e.path().string().find(".partial"), std::string::npos) << e.path();
}

TEST_F(StorageTest, ATruncatedFileIsNamedBeforeTheRun) {
  auto c = config(Storage::files);
  auto entry = prepare_dataset(c, {});
  ASSERT_TRUE(entry);
  const std::string victim = entry->path(entry->files[42]);
  fs::resize_file(victim, 10);
  auto reopened = prepare_dataset(c, {});
  ASSERT_FALSE(reopened);
  EXPECT_NE(reopened.error().message.find(victim), std::string::npos) << reopened.error().message;
}

TEST_F(StorageTest, ACorruptedByteIsNamedWithItsSample) {
  for (Storage storage : {Storage::files, Storage::shards}) {
    dataset::Entry entry;
    auto c = config(storage);
    const auto store = store_of(c, &entry);
    const std::string victim = entry.path(entry.files[storage == Storage::files ? 42 : 0]);
    const int64_t offset = storage == Storage::files ? 30 : (42 * (24 + 32) + 30);  // inside sample 42's payload
    {
      std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(offset);
      f.put('\x5a');
    }
    try {
      read_row(*store, 42, 0);
      ADD_FAILURE() << "a corrupted byte was read without an error (" << storage_name(storage) << ")";
    } catch (const DatasetError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(victim), std::string::npos) << what;
      EXPECT_NE(what.find("sample 42"), std::string::npos) << what;
      EXPECT_NE(what.find("crc32"), std::string::npos) << what;
    }
  }
}

// A loader worker that fails a batch replies with why and exits. Found gone while the main process
// sends it its next task (the main process slower than the worker), the run still says why, not
// only that the worker exited with status 1.
TEST_F(StorageTest, AWorkerFoundGoneStillNamesTheCorruptedSample) {
  dataset::Entry entry;
  auto c = config(Storage::files);
  c.mode = Mode::loader;
  c.shuffle = false;
  c.num_workers = 1;
  c.prefetch_factor = 2;
  const auto store = store_of(c, &entry);
  // In the third batch: the first two are asked for at once, the third when the first arrives.
  const std::string victim = entry.path(entry.files[260]);
  {
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);
    f.put('\x5a');
  }
  auto loader = make_process_loader(c, store, true, false);
  loader->begin_epoch(0);
  ASSERT_TRUE(loader->next());
  usleep(500'000);  // the worker has failed the third batch and exited; the fourth is sent to no one
  try {
    while (loader->next()) {
    }
    ADD_FAILURE() << "the corrupted sample was read without an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(victim + ": crc32 mismatch"), std::string::npos) << e.what();
  }
}

TEST_F(StorageTest, AFullDiskLeavesNothingToTrust) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  const std::string small = cache_ + "/small";
  fs::create_directories(small);
  if (mount("tmpfs", small.c_str(), "tmpfs", 0, "size=256k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  auto c = config(Storage::shards);
  c.samples = 20'000;  // 20,000 x 56 bytes: more than 256 KiB
  c.dataset_cache = small;
  auto entry = prepare_dataset(c, {});
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(small)) left.push_back(e.path().filename().string());
  umount(small.c_str());
  ASSERT_FALSE(entry);
  EXPECT_NE(entry.error().message.find(small + "/" + dataset::layout_of(c).key() + ".partial-"), std::string::npos)
      << entry.error().message;
  EXPECT_NE(entry.error().message.find("No space left"), std::string::npos) << entry.error().message;
  EXPECT_NE(entry.error().hint.find("--dataset-cache"), std::string::npos) << entry.error().hint;
  EXPECT_TRUE(left.empty()) << "left behind: " << left.front();
}

TEST_F(StorageTest, ColdEvictsAndWarmHoldsEveryPage) {
  for (PageCache mode : {PageCache::cold, PageCache::warm}) {
    auto c = config(Storage::files);
    c.page_cache = mode;
    auto entry = prepare_dataset(c, {});
    ASSERT_TRUE(entry);
    auto settled = settle_page_cache(c, *entry, /*first_measured=*/true);
    ASSERT_TRUE(settled);
    int64_t total = 0;
    const int64_t resident = resident_pages(entry->paths(), &total);
    EXPECT_EQ(settled->total_pages, total);
    if (mode == PageCache::cold) {
      EXPECT_LE(resident, total / 100) << "cold: pages still resident after eviction";
    } else {
      EXPECT_GE(resident, total * 99 / 100) << "warm: pages missing after the warming read";
    }
    // And what a run records before each measured epoch.
    c.mode = Mode::loader;
    c.num_workers = 1;
    const RunResult r = run_workload(c);
    ASSERT_EQ(r.status, "ok");
    ASSERT_EQ(r.storage["epochs"].size(), 2u);
    for (const auto& e : r.storage["epochs"]) {
      const int64_t pages = e["total_pages"].get<int64_t>();
      EXPECT_EQ(pages, total);
      if (mode == PageCache::cold) {
        EXPECT_LE(e["resident_pages"].get<int64_t>(), pages / 100) << e.dump();
      } else {
        EXPECT_GE(e["resident_pages"].get<int64_t>(), pages * 99 / 100) << e.dump();
      }
    }
    EXPECT_EQ(r.storage["page_cache"], page_cache_name(mode));
    EXPECT_EQ(r.storage["files"], 600);
    for (const auto& note : r.notes) EXPECT_EQ(note.find("could not be made cold"), std::string::npos) << note;
  }
}

// tmpfs keeps files only in memory: a cold run there once was labelled cold with every page
// resident. The record says it could not be made cold.
TEST_F(StorageTest, ColdOnTmpfsSaysItCouldNotBeMadeCold) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
  const std::string memory = cache_ + "/tmpfs";
  fs::create_directories(memory);
  if (mount("tmpfs", memory.c_str(), "tmpfs", 0, "size=16m") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  auto c = config(Storage::files);
  c.dataset_cache = memory;
  c.page_cache = PageCache::cold;
  const RunResult r = run_workload(c);
  umount2(memory.c_str(), MNT_DETACH);
  ASSERT_EQ(r.status, "ok") << r.error;
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("the page cache could not be made cold there"), std::string::npos) << r.notes[0];
  EXPECT_NE(r.notes[0].find("is on tmpfs or ramfs"), std::string::npos) << r.notes[0];
}

// A cache folder another user can change (writable without the sticky bit, or theirs), or one
// below such a folder: they could swap what root writes or reads there. Refused, exit 2, naming
// the folder and the fix; a sticky shared folder is fine.
TEST_F(StorageTest, ACacheFolderOthersCouldChangeIsRefused) {
  auto c = config(Storage::files);
  c.samples = 20;
  const std::string open_folder = cache_ + "/open";
  fs::create_directories(open_folder);
  fs::permissions(open_folder, fs::perms::all);
  for (const std::string& cache : {open_folder, open_folder + "/below/datasets"}) {
    c.dataset_cache = cache;
    auto entry = prepare_dataset(c, {});
    ASSERT_FALSE(entry) << cache;
    EXPECT_EQ(entry.error().exit_code, kExitBadInput);
    EXPECT_NE(entry.error().message.find(open_folder + " is not yours alone"), std::string::npos)
        << entry.error().message;
    EXPECT_NE(entry.error().hint.find("chmod go-w " + open_folder), std::string::npos) << entry.error().hint;
    EXPECT_NE(entry.error().hint.find("--dataset-cache"), std::string::npos) << entry.error().hint;
  }
  EXPECT_TRUE(fs::is_empty(open_folder));  // nothing was created under it
  fs::permissions(open_folder, fs::perms::all | fs::perms::sticky_bit);
  EXPECT_TRUE(prepare_dataset(c, {}).ok());
  if (geteuid() != 0) return;
  const std::string theirs = cache_ + "/theirs";
  fs::create_directories(theirs);
  ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
  c.dataset_cache = theirs;
  auto entry = prepare_dataset(c, {});
  ASSERT_FALSE(entry);
  EXPECT_NE(entry.error().message.find("belongs to uid 65534"), std::string::npos) << entry.error().message;
  EXPECT_TRUE(fs::is_empty(theirs));
}

// An entry's manifest and files are trusted for sizes only: a name outside the entry (../x, an
// absolute path), a record swapped for a link (to /dev/zero, which once hung the run forever) or a
// FIFO, and a manifest of the wrong JSON types (which once aborted the workload program) are each
// a damaged entry, named with its fix.
TEST_F(StorageTest, AnEntryCannotReachOutsideItselfOrHang) {
  for (Storage storage : {Storage::files, Storage::shards}) {
    auto c = config(storage);
    c.samples = 40;
    auto entry = prepare_dataset(c, {});
    ASSERT_TRUE(entry);
    const std::string manifest_path = entry->dir + "/" + dataset::kManifestFile;
    std::string original;
    {
      std::ifstream in(manifest_path);
      original.assign(std::istreambuf_iterator<char>(in), {});
    }
    const auto damaged_by = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& words) {
      nlohmann::json manifest = nlohmann::json::parse(original);
      edit(manifest);
      std::ofstream(manifest_path, std::ios::trunc) << manifest.dump();
      auto reopened = prepare_dataset(c, {});
      std::ofstream(manifest_path, std::ios::trunc) << original;
      ASSERT_FALSE(reopened) << words;
      EXPECT_NE(reopened.error().message.find(words), std::string::npos) << reopened.error().message;
      EXPECT_NE(reopened.error().message.find(entry->dir), std::string::npos) << reopened.error().message;
      EXPECT_NE(reopened.error().hint.find("remove " + entry->dir), std::string::npos) << reopened.error().hint;
    };
    damaged_by([](auto& m) { m["files"][0][0] = "../x"; }, "names ../x, outside the entry");
    damaged_by([](auto& m) { m["files"][0][0] = "/dev/zero"; }, "names /dev/zero, outside the entry");
    damaged_by([](auto& m) { m["files"][0][0] = "manifest.json"; }, "where the layout has");
    damaged_by([](auto& m) { m["files"][0][1] = "12"; }, "not [\"name\", bytes]");
    damaged_by([](auto& m) { m["files"] = nlohmann::json::object(); }, "is not a list");
    damaged_by([](auto& m) { m = nlohmann::json::array(); }, "not a dataset manifest");

    // The last file: index.bin for shards, a record for files.
    const std::string victim = entry->path(entry->files.back());
    fs::remove(victim);
    fs::create_symlink("/dev/zero", victim);
    auto linked = prepare_dataset(c, {});
    ASSERT_FALSE(linked);
    EXPECT_NE(linked.error().message.find(victim + " is not a regular file"), std::string::npos)
        << linked.error().message;
    fs::remove(victim);
    ASSERT_EQ(mkfifo(victim.c_str(), 0600), 0);
    auto fifo = prepare_dataset(c, {});
    ASSERT_FALSE(fifo);
    EXPECT_NE(fifo.error().message.find(victim + " is not a regular file"), std::string::npos) << fifo.error().message;
    // A store opened before the swap reads no FIFO either (files: opened per read).
    if (storage == Storage::files) {
      const auto store = open_store(c, &*entry);
      try {
        read_row(*store, 39, 0);
        ADD_FAILURE() << "a FIFO was read as a record";
      } catch (const DatasetError& e) {
        EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
      }
    }
  }
}

// The read-rate probe file is made with mkstemp: a link planted at the name the probe once had
// (CACHE/.seq-read-probe-PID) is never opened, so the file it names keeps its bytes.
TEST_F(StorageTest, TheReadRateProbeNeverOpensAPlantedName) {
  const std::string victim = folder_.file("victim");
  std::ofstream(victim) << "keep";
  const std::string cache = cache_ + "/probe";
  fs::create_directories(cache);
  fs::create_symlink(victim, fmt::format("{}/.seq-read-probe-{}", cache, getpid()));
  auto device = page_cache::block_device(cache, {});
  ASSERT_TRUE(device) << device.error().message;
  std::ifstream in(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "keep") << device->how;
  for (const auto& e : fs::directory_iterator(cache))
    EXPECT_EQ(e.path().filename().string().find("XXXXXX"), std::string::npos) << e.path();
}

}  // namespace
}  // namespace ingero::workloads

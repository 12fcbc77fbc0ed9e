// SPDX-License-Identifier: Apache-2.0
// A run's knobs: "" for a knob that is absent, ordered by name, and the JSON of the plain
// std::map<std::string, std::string> they were before, so sweep points stored by older builds
// read back and new ones are stored as they were.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/knobs.h"

namespace ingero {
namespace {

using Map = std::map<std::string, std::string>;

const Map kPoint = {{"mode", "job"},           {"num_workers", "4"},       {"prefetch_factor", "8"},
                    {"pin_memory", "on"},      {"persistent_workers", ""}};

Knobs knobs_from(const Map& m) {
  Knobs k;
  for (const auto& [name, value] : m) k.set(name, value);
  return k;
}

TEST(Knobs, AbsentReadsEmptyAndIsToldFromNotApplying) {
  const Knobs k = knobs_from(kPoint);
  EXPECT_EQ(k.get(knob::kNumWorkers), "4");
  EXPECT_EQ(k.get("sampling"), "");
  EXPECT_FALSE(k.has("sampling"));
  EXPECT_EQ(k.get(knob::kPersistentWorkers), "");
  EXPECT_TRUE(k.has(knob::kPersistentWorkers));
  EXPECT_TRUE(Knobs().empty());
}

TEST(Knobs, SetReplacesAndIterationIsByName) {
  Knobs k{{knob::kPinMemory, "off"}, {knob::kMode, "loader"}};
  k.set(knob::kPinMemory, "on");
  k.set(knob::kNumWorkers, "2");
  std::vector<std::string> names, values;
  for (const auto& [name, value] : k) {
    names.push_back(name);
    values.push_back(value);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"mode", "num_workers", "pin_memory"}));
  EXPECT_EQ(values, (std::vector<std::string>{"loader", "2", "on"}));
  EXPECT_EQ(k, (Knobs{{"mode", "loader"}, {"num_workers", "2"}, {"pin_memory", "on"}}));
  EXPECT_NE(k, (Knobs{{"mode", "loader"}, {"num_workers", "2"}, {"pin_memory", "off"}}));
}

TEST(Knobs, JsonIsTheMapsJson) {
  EXPECT_EQ(nlohmann::json(knobs_from(kPoint)).dump(), nlohmann::json(kPoint).dump());
  EXPECT_EQ(nlohmann::json(knobs_from(kPoint)).dump(),
            R"({"mode":"job","num_workers":"4","persistent_workers":"","pin_memory":"on","prefetch_factor":"8"})");
  EXPECT_EQ(nlohmann::json(Knobs()).dump(), nlohmann::json(Map()).dump());
  EXPECT_EQ(nlohmann::json(Knobs()).dump(), "{}");
  const nlohmann::json j = knobs_from(kPoint);
  EXPECT_EQ(j.get<Knobs>(), knobs_from(kPoint));
}

// A job sweep's point as an older build stored it (sweep_points.config_json).
TEST(Knobs, AnOldStoredPointReadsBack) {
  const auto config = nlohmann::json::parse(
      R"({"knobs":{"mode":"job","num_workers":"0","persistent_workers":"","pin_memory":"off","prefetch_factor":""},)"
      R"("mode":"job","num_workers":0,"pin_memory":false})");
  const Knobs k = config.value("knobs", Knobs{});
  EXPECT_EQ(k.get(knob::kMode), "job");
  EXPECT_EQ(k.get(knob::kNumWorkers), "0");
  EXPECT_EQ(k.get(knob::kPinMemory), "off");
  EXPECT_TRUE(k.has(knob::kPrefetchFactor));
  EXPECT_EQ(nlohmann::json(k).dump(), config["knobs"].dump());
  // A point stored without knobs (the job as written) has none until its first run tells them.
  EXPECT_TRUE(nlohmann::json::parse(R"({"mode":"job","as_written":true})").value("knobs", Knobs{}).empty());
  // What the map refused, it refuses.
  EXPECT_THROW(nlohmann::json::parse(R"({"num_workers":4})").get<Knobs>(), nlohmann::json::type_error);
  EXPECT_THROW(nlohmann::json::parse(R"(["num_workers"])").get<Knobs>(), nlohmann::json::type_error);
}

TEST(Knobs, StorageIsNormalised) {
  const Knobs memory = storage_knobs(nlohmann::json::object());
  EXPECT_EQ(memory, (Knobs{{"format", "raw"}, {"image_size", ""}, {"page_cache", ""}, {"storage", "memory"}}));
  // In memory a format or page cache does not count.
  EXPECT_EQ(storage_knobs({{"storage", "memory"}, {"format", "jpeg"}, {"page_cache", "cold"}}), memory);
  EXPECT_EQ(storage_knobs({{"storage", "files"}}),
            (Knobs{{"format", "raw"}, {"image_size", ""}, {"page_cache", "warm"}, {"storage", "files"}}));
  EXPECT_EQ(storage_knobs({{"storage", "shards"}, {"format", "jpeg"}, {"image_size", 224}, {"page_cache", "cold"}}),
            (Knobs{{"format", "jpeg"}, {"image_size", "224"}, {"page_cache", "cold"}, {"storage", "shards"}}));
  // The image size only for JPEG.
  EXPECT_EQ(storage_knobs({{"storage", "files"}, {"format", "raw"}, {"image_size", 224}}).get(knob::kImageSize), "");
}

}  // namespace
}  // namespace ingero

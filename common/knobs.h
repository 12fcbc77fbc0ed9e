// SPDX-License-Identifier: Apache-2.0
// A run's knobs by name: what the sweep moves along (mode, num_workers, prefetch_factor,
// pin_memory, persistent_workers) and where its dataset lives (storage, format, page_cache,
// image_size). A knob that does not apply reads "" (prefetch and persistence without workers,
// the page cache in memory). Stored as a JSON object of strings (a sweep point's config_json
// "knobs", docs/formats.md), the format the plain map wrote.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ingero {

namespace knob {
inline constexpr const char kMode[] = "mode";
inline constexpr const char kNumWorkers[] = "num_workers";
inline constexpr const char kPrefetchFactor[] = "prefetch_factor";
inline constexpr const char kPinMemory[] = "pin_memory";
inline constexpr const char kPersistentWorkers[] = "persistent_workers";
inline constexpr const char kStorage[] = "storage";
inline constexpr const char kFormat[] = "format";
inline constexpr const char kPageCache[] = "page_cache";
inline constexpr const char kImageSize[] = "image_size";
// The DataLoader's own knobs: what the observer overrides and a job's command templates take.
inline constexpr const char* const kLoaderKnobs[] = {kNumWorkers, kPrefetchFactor, kPinMemory, kPersistentWorkers};
}  // namespace knob

class Knobs {
 public:
  using Map = std::map<std::string, std::string, std::less<>>;

  Knobs() = default;
  Knobs(std::initializer_list<Map::value_type> values) : values_(values) {}

  // The knob's value; "" where it is absent.
  const std::string& get(std::string_view name) const;
  // Whether the knob is there at all (a knob that does not apply is there, as "").
  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }
  void set(std::string_view name, std::string value);

  bool empty() const { return values_.empty(); }
  // By name, in order.
  Map::const_iterator begin() const { return values_.begin(); }
  Map::const_iterator end() const { return values_.end(); }

  friend bool operator==(const Knobs& a, const Knobs& b) { return a.values_ == b.values_; }
  friend bool operator!=(const Knobs& a, const Knobs& b) { return !(a == b); }

 private:
  Map values_;
};

// {"name": "value", ...}; reading takes what the map took (an object of strings) and throws
// nlohmann's type_error for anything else, as it did.
void to_json(nlohmann::json& j, const Knobs& knobs);
void from_json(const nlohmann::json& j, Knobs& knobs);

// Where a run's dataset lives, from its workload config, normalised: storage (memory when not
// given), format (raw in memory: only a dataset on disk has one), page_cache (warm on disk when
// not given, "" in memory) and image_size (only for JPEG). Values are text: strings as they are,
// other JSON as written (an image size of 224 reads "224").
Knobs storage_knobs(const nlohmann::json& config);
// A run config's field as knob text (fallback when absent or null): strings as they are, booleans
// "on"/"off", other JSON as written.
std::string knob_text(const nlohmann::json& config, const char* key, const std::string& fallback);

}  // namespace ingero

// SPDX-License-Identifier: Apache-2.0
// The rules a sweep follows, as pure functions over measured epoch times (tested on
// synthetic timings): when a point has been measured enough, when it is dropped, and
// when a run of it is stopped early.
#pragma once

#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/knobs.h"
#include "reports/analysis/significance.h"

namespace ingero::harness {

struct SweepRules {
  double confidence = 0.90;    // coverage of a point's median interval (order statistics)
  double tight_width = 0.10;   // measured enough: the interval is at most this share of the median
  double prune_factor = 1.25;  // clearly worse: the interval lies wholly above this times the best median
  double abort_factor = 2.0;   // stop a run whose epoch passes this times the best median ...
  double abort_margin_s = 1.0; // ... and the best median plus this (worker start-up is not a slow point)
  int max_repeats = 3;         // most runs of one point
  int verify_rounds = 2;       // re-runs of baseline and recommendation, each round both, interleaved
  int separate_repeats = 6;    // most runs of a point while the fastest points are told apart
  bool exhaustive = false;     // every point max_repeats times; no pruning, no early stop
  bool coordinate = true;      // search knob by knob (search_stage) rather than every point of the grid

  nlohmann::json to_json() const;
  std::string describe() const;  // the rules in words, printed and stored with the sweep
};

// A point's measurements so far: epochs of its completed runs.
struct PointProgress {
  std::vector<double> epochs;
  int runs = 0;
  bool stopped_early = false;  // a run hit the epoch deadline
  std::string stop_reason;
};

// The best point among the others: its median and interval.
struct Best {
  std::string point;
  double median_s = 0;
  reports::Interval interval;
};
std::optional<Best> best_point(const std::vector<std::pair<std::string, const PointProgress*>>& measured,
                               const std::string& except, const SweepRules& rules);

enum class PointDecision { measure_again, done, prune };
struct Decision {
  PointDecision what = PointDecision::measure_again;
  std::string reason;  // with the numbers
};
Decision decide(const PointProgress& point, const std::optional<Best>& best, const SweepRules& rules);

// Coordinate search. A point's knobs (common/knobs.h): mode, num_workers, prefetch_factor, pin_memory,
// persistent_workers ("" where a knob does not apply: prefetch and persistence without workers).
// The knobs varied one at a time around the best point, in this order, round after round.
inline const char* const kCoordinateKnobs[] = {knob::kPrefetchFactor, knob::kPinMemory, knob::kPersistentWorkers,
                                               knob::kNumWorkers};
inline constexpr int kCoordinateKnobCount = static_cast<int>(std::size(kCoordinateKnobs));
// The first stage: every mode × num_workers with the other knobs at their first values (the
// first point that has each). Returns indexes into points.
std::vector<size_t> first_search_stage(const std::vector<Knobs>& points);
// The points that differ from points[best] in `knob` alone; a knob that does not apply to one of
// the two ("") matches any value.
std::vector<size_t> knob_neighbours(const std::vector<Knobs>& points, size_t best, const std::string& knob);

// Before verifying: a recommendation that is not the fastest point, only because their intervals
// overlap (the cheaper of points not told apart), may rest on a point measured too little to tell.
// The contest: the fastest point and the others whose intervals overlap it, the recommended among
// them, at most kMostContenders, fastest first.
inline constexpr size_t kMostContenders = 3;
struct Separation {
  std::vector<std::string> contenders;  // fastest first; empty when the recommendation is the fastest
  std::vector<std::string> repeat;      // to run once more now, the least measured first; empty: stop
  bool apart = false;                   // no contender's interval overlaps the fastest's
  bool most_runs = false;               // a contender still wide had separate_repeats runs
};
// measured: the points the recommendation chooses among; recommended: the one it chooses now.
// A round repeats the contenders whose intervals are wider than tight_width, each below
// separate_repeats runs; contenders all tight and overlapping are close, not run again.
Separation separate(const std::vector<std::pair<std::string, const PointProgress*>>& measured,
                    const std::string& recommended, const SweepRules& rules);

// The epoch deadline for a run of a point, given the best so far (none: no early stop).
std::optional<double> epoch_deadline(const std::optional<Best>& best, const SweepRules& rules);

}  // namespace ingero::harness

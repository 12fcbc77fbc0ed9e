// SPDX-License-Identifier: Apache-2.0
#include "harness/sweep_rules.h"

#include <algorithm>

#include <fmt/format.h>

#include "reports/text/format.h"

namespace ingero::harness {

using reports::format_seconds;

nlohmann::json SweepRules::to_json() const {
  return {{"confidence", confidence},     {"tight_width", tight_width}, {"prune_factor", prune_factor},
          {"abort_factor", abort_factor}, {"abort_margin_s", abort_margin_s}, {"max_repeats", max_repeats}, {"verify_rounds", verify_rounds},
          {"separate_repeats", separate_repeats},
          {"exhaustive", exhaustive},     {"coordinate", coordinate && !exhaustive}, {"text", describe()}};
}

namespace {

std::string separation_words(const SweepRules& r) {
  return fmt::format("; before that, when the cheaper of points not told apart from the fastest would be "
                     "recommended, those of the fastest and up to {} points whose intervals overlap it that are wider than "
                     "the tight width are run again, the least measured first, until they lie apart, are all "
                     "tight, or have had {} runs each (or the budget ends)",
                     kMostContenders - 1, r.separate_repeats);
}

}  // namespace

std::string SweepRules::describe() const {
  if (exhaustive)
    return fmt::format("exhaustive: every point is run {} times, none is dropped or stopped early; then baseline "
                       "and recommendation are re-run, interleaved, {} rounds{}",
                       max_repeats, verify_rounds, separation_words(*this));
  const std::string search =
      coordinate ? "the search goes knob by knob: first every mode × num_workers with the other knobs at their first "
                   "values, then, around the best point so far, prefetch_factor, pin_memory, persistent_workers and "
                   "num_workers in turn, round after round until a whole round leaves the best point unchanged; "
                   "points off that path are skipped (and listed). "
                 : "";
  return search + fmt::format(
      "a point is run (warm-up, then the measured epochs, in a fresh process) until the interval of its median "
      "epoch time ({:g} % coverage, order statistics) is narrower than {:g} % of the median or lies apart from the "
      "best point's interval, at most {} times; a point whose interval lies wholly above {:g} x the best median is "
      "dropped; a run stops early when an epoch takes longer than {:g} x the best median and the best median + {:g} s, "
      "and its point is dropped; then baseline and recommendation are re-run, interleaved, {} rounds{}",
      confidence * 100, tight_width * 100, max_repeats, prune_factor, abort_factor, abort_margin_s, verify_rounds,
      separation_words(*this));
}

std::optional<Best> best_point(const std::vector<std::pair<std::string, const PointProgress*>>& measured,
                               const std::string& except, const SweepRules& rules) {
  std::optional<Best> best;
  for (const auto& [point, progress] : measured) {
    if (point == except || progress->epochs.empty() || progress->stopped_early) continue;
    const double m = reports::median(progress->epochs);
    if (!best || m < best->median_s)
      best = Best{point, m, reports::median_interval(progress->epochs, rules.confidence)};
  }
  return best;
}

Decision decide(const PointProgress& p, const std::optional<Best>& best, const SweepRules& rules) {
  if (rules.exhaustive)
    return p.runs >= rules.max_repeats ? Decision{PointDecision::done, fmt::format("{} runs", p.runs)}
                                       : Decision{PointDecision::measure_again, ""};
  if (p.stopped_early) return {PointDecision::prune, p.stop_reason};
  if (p.epochs.empty()) return {PointDecision::measure_again, ""};
  const double m = reports::median(p.epochs);
  const reports::Interval interval = reports::median_interval(p.epochs, rules.confidence);
  if (best && interval.low > rules.prune_factor * best->median_s)
    return {PointDecision::prune,
            fmt::format("clearly slower: median {} with interval [{}, {}] lies above {:g} x the best so far ({}: {})",
                        format_seconds(m), format_seconds(interval.low), format_seconds(interval.high),
                        rules.prune_factor, best->point, format_seconds(best->median_s))};
  if (interval.width_ratio(m) <= rules.tight_width)
    return {PointDecision::done, fmt::format("interval [{}, {}] within {:g} % of the median {}",
                                             format_seconds(interval.low), format_seconds(interval.high),
                                             rules.tight_width * 100, format_seconds(m))};
  if (best && !interval.overlaps(best->interval))
    return {PointDecision::done, fmt::format("interval [{}, {}] apart from the best's [{}, {}]",
                                             format_seconds(interval.low), format_seconds(interval.high),
                                             format_seconds(best->interval.low), format_seconds(best->interval.high))};
  if (p.runs >= rules.max_repeats)
    return {PointDecision::done, fmt::format("{} runs (the most), interval [{}, {}]", p.runs,
                                             format_seconds(interval.low), format_seconds(interval.high))};
  return {PointDecision::measure_again, ""};
}

Separation separate(const std::vector<std::pair<std::string, const PointProgress*>>& measured,
                    const std::string& recommended, const SweepRules& rules) {
  struct Measured {
    std::string point;
    const PointProgress* progress;
    double median_s;
    reports::Interval interval;
  };
  std::vector<Measured> points;
  for (const auto& [point, progress] : measured)
    if (!progress->epochs.empty() && !progress->stopped_early)
      points.push_back({point, progress, reports::median(progress->epochs),
                        reports::median_interval(progress->epochs, rules.confidence)});
  std::stable_sort(points.begin(), points.end(),
                   [](const Measured& a, const Measured& b) { return a.median_s < b.median_s; });
  Separation s;
  if (points.empty() || points.front().point == recommended) {
    s.apart = true;
    return s;
  }
  // The fastest, the recommended, then the next fastest overlapping the fastest.
  std::vector<const Measured*> contest = {&points.front()};
  auto rec = std::find_if(points.begin(), points.end(), [&](const Measured& m) { return m.point == recommended; });
  if (rec != points.end() && rec->interval.overlaps(points.front().interval)) contest.push_back(&*rec);
  for (size_t i = 1; i < points.size() && contest.size() < kMostContenders; ++i)
    if (points[i].point != recommended && points[i].interval.overlaps(points.front().interval))
      contest.push_back(&points[i]);
  if (contest.size() == 1) {
    s.apart = true;
    return s;
  }
  std::stable_sort(contest.begin() + 1, contest.end(),
                   [](const Measured* a, const Measured* b) { return a->median_s < b->median_s; });
  for (const Measured* m : contest) s.contenders.push_back(m->point);
  // The wide intervals keep them together: those are measured again. Intervals all within
  // tight_width that still overlap are points close to each other: more runs would hardly tell.
  std::vector<const Measured*> repeat;
  for (const Measured* m : contest) {
    if (m->interval.width_ratio(m->median_s) <= rules.tight_width) continue;
    if (m->progress->runs < rules.separate_repeats) repeat.push_back(m);
    else s.most_runs = true;
  }
  std::stable_sort(repeat.begin(), repeat.end(),
                   [](const Measured* a, const Measured* b) { return a->progress->runs < b->progress->runs; });
  for (const Measured* m : repeat) s.repeat.push_back(m->point);
  return s;
}

std::optional<double> epoch_deadline(const std::optional<Best>& best, const SweepRules& rules) {
  if (rules.exhaustive || !best) return std::nullopt;
  return std::max(rules.abort_factor * best->median_s, best->median_s + rules.abort_margin_s);
}

std::vector<size_t> first_search_stage(const std::vector<Knobs>& points) {
  Knobs first;  // each other knob's first value, from the first point that has one
  for (const Knobs& p : points)
    for (const char* name : {knob::kPrefetchFactor, knob::kPinMemory, knob::kPersistentWorkers})
      if (!first.has(name) && !p.get(name).empty()) first.set(name, p.get(name));
  std::vector<size_t> out;
  for (size_t i = 0; i < points.size(); ++i) {
    bool at_first = true;
    for (const auto& [name, v] : first) {
      const std::string& mine = points[i].get(name);
      at_first &= mine.empty() || mine == v;
    }
    if (at_first) out.push_back(i);
  }
  return out;
}

std::vector<size_t> knob_neighbours(const std::vector<Knobs>& points, size_t best, const std::string& knob) {
  std::vector<size_t> out;
  if (best >= points.size()) return out;
  const Knobs& b = points[best];
  for (size_t i = 0; i < points.size(); ++i) {
    if (i == best || points[i].get(knob) == b.get(knob)) continue;
    bool same_elsewhere = true;
    for (const Knobs* side : {&b, &points[i]})
      for (const auto& [name, v] : *side) {
        if (name == knob) continue;
        const std::string &x = b.get(name), &y = points[i].get(name);
        same_elsewhere &= x == y || x.empty() || y.empty();
      }
    if (same_elsewhere) out.push_back(i);
  }
  return out;
}

}  // namespace ingero::harness

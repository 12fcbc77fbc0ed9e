// SPDX-License-Identifier: Apache-2.0
// The sweep's rules on synthetic epoch times: when a point is measured enough, dropped,
// or stopped early.
#include <gtest/gtest.h>

#include "harness/sweep_rules.h"

namespace ingero::harness {
namespace {

PointProgress progress(std::vector<double> epochs, int runs) {
  PointProgress p;
  p.epochs = std::move(epochs);
  p.runs = runs;
  return p;
}

std::optional<Best> best_of(const PointProgress& p, const SweepRules& rules) {
  return best_point({{"best", &p}}, "", rules);
}

TEST(SweepRules, TightIntervalIsMeasuredEnough) {
  SweepRules rules;
  auto d = decide(progress({1.00, 1.01, 0.99, 1.00, 1.02}, 1), std::nullopt, rules);
  EXPECT_EQ(d.what, PointDecision::done);
  EXPECT_NE(d.reason.find("within 10 %"), std::string::npos) << d.reason;
}

TEST(SweepRules, NoisyPointIsMeasuredAgainUntilTheMostRuns) {
  SweepRules rules;
  const std::vector<double> noisy = {1.0, 1.5, 0.8, 1.3, 0.9};
  EXPECT_EQ(decide(progress(noisy, 1), std::nullopt, rules).what, PointDecision::measure_again);
  auto last = decide(progress(noisy, rules.max_repeats), std::nullopt, rules);
  EXPECT_EQ(last.what, PointDecision::done);
  EXPECT_NE(last.reason.find("the most"), std::string::npos);
}

TEST(SweepRules, ClearlySlowerPointIsPrunedWithTheNumbers) {
  SweepRules rules;
  const PointProgress fast = progress({1.0, 1.0, 1.01, 0.99, 1.0}, 1);
  auto d = decide(progress({2.0, 2.6, 1.9, 2.4, 2.2}, 1), best_of(fast, rules), rules);
  EXPECT_EQ(d.what, PointDecision::prune);
  EXPECT_NE(d.reason.find("clearly slower"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("best"), std::string::npos);
  // Slower, but not beyond the prune factor, and noisy: measured again rather than dropped.
  EXPECT_EQ(decide(progress({1.1, 1.5, 0.9, 1.3, 1.0}, 1), best_of(fast, rules), rules).what,
            PointDecision::measure_again);
}

TEST(SweepRules, ARunStoppedAtTheDeadlineDropsItsPoint) {
  SweepRules rules;
  const PointProgress fast = progress({1.0, 1.0, 1.0}, 1);
  auto deadline = epoch_deadline(best_of(fast, rules), rules);
  ASSERT_TRUE(deadline.has_value());
  EXPECT_DOUBLE_EQ(*deadline, 2.0);  // 2 x 1 s, and 1 s + the 1 s margin
  const PointProgress tiny = progress({0.01, 0.01, 0.01}, 1);
  EXPECT_DOUBLE_EQ(*epoch_deadline(best_of(tiny, rules), rules), 1.01);  // start-up of workers is not a slow point
  EXPECT_FALSE(epoch_deadline(std::nullopt, rules).has_value());
  PointProgress slow = progress({}, 1);
  slow.stopped_early = true;
  slow.stop_reason = "an epoch passed 2 s";
  auto d = decide(slow, best_of(fast, rules), rules);
  EXPECT_EQ(d.what, PointDecision::prune);
  EXPECT_EQ(d.reason, "an epoch passed 2 s");
}

TEST(SweepRules, ExhaustiveMeasuresEveryPointTheMostTimesAndNeverStops) {
  SweepRules rules;
  rules.exhaustive = true;
  const PointProgress fast = progress({1.0, 1.0, 1.0}, 1);
  EXPECT_EQ(decide(progress({9.0, 9.0, 9.0}, 1), best_of(fast, rules), rules).what, PointDecision::measure_again);
  EXPECT_EQ(decide(progress({9.0, 9.0, 9.0}, rules.max_repeats), best_of(fast, rules), rules).what,
            PointDecision::done);
  EXPECT_FALSE(epoch_deadline(best_of(fast, rules), rules).has_value());
  EXPECT_NE(rules.describe().find("exhaustive"), std::string::npos);
}

TEST(SweepRules, BestPointSkipsItselfAndStoppedPoints) {
  SweepRules rules;
  const PointProgress a = progress({1.0, 1.0}, 1), b = progress({0.5, 0.5}, 1);
  PointProgress stopped = progress({0.1}, 1);
  stopped.stopped_early = true;
  auto best = best_point({{"a", &a}, {"b", &b}, {"c", &stopped}}, "", rules);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->point, "b");
  auto other = best_point({{"a", &a}, {"b", &b}}, "b", rules);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->point, "a");
  EXPECT_TRUE(rules.to_json().contains("prune_factor"));
}

// The #154318-style grid in plan order: loader, workers 0/4/8, prefetch 2/12, pin on/off,
// persistent off/on (w0 has no prefetch or persistence).
std::vector<Knobs> grid() {
  std::vector<Knobs> out;
  for (const std::string pin : {"on", "off"})
    out.push_back({{"mode", "loader"}, {"num_workers", "0"}, {"prefetch_factor", ""}, {"pin_memory", pin},
                   {"persistent_workers", ""}});
  for (const std::string w : {"4", "8"})
    for (const std::string pf : {"2", "12"})
      for (const std::string pin : {"on", "off"})
        for (const std::string persistent : {"off", "on"})
          out.push_back({{"mode", "loader"}, {"num_workers", w}, {"prefetch_factor", pf}, {"pin_memory", pin},
                         {"persistent_workers", persistent}});
  return out;
}

std::string label(const Knobs& k) {
  return "w" + k.get("num_workers") + " pf" + k.get("prefetch_factor") + " " + k.get("pin_memory") + " " +
         k.get("persistent_workers");
}

TEST(SweepRules, CoordinateSearchVariesWorkersFirstThenOneKnobAtATimeAroundTheBest) {
  const auto points = grid();  // 2 + 16 points
  auto labels = [&](const std::vector<size_t>& idx) {
    std::vector<std::string> out;
    for (size_t i : idx) out.push_back(label(points[i]));
    return out;
  };
  // First: each worker count with the first prefetch, pin and persistence values.
  EXPECT_EQ(labels(first_search_stage(points)),
            (std::vector<std::string>{"w0 pf on ", "w4 pf2 on off", "w8 pf2 on off"}));
  // w8 pf2 pin won: then each knob alone around it.
  const size_t w8 = 10;
  ASSERT_EQ(label(points[w8]), "w8 pf2 on off");
  EXPECT_EQ(labels(knob_neighbours(points, w8, "prefetch_factor")), (std::vector<std::string>{"w8 pf12 on off"}));
  EXPECT_EQ(labels(knob_neighbours(points, w8, "pin_memory")), (std::vector<std::string>{"w8 pf2 off off"}));
  EXPECT_EQ(labels(knob_neighbours(points, w8, "persistent_workers")), (std::vector<std::string>{"w8 pf2 on on"}));
  // Workers around a persistent point reach w0 too (persistence does not apply there) and w4 persistent:
  // the interaction a single pass at persistent=off misses.
  const size_t w8_persistent = 11;
  ASSERT_EQ(label(points[w8_persistent]), "w8 pf2 on on");
  EXPECT_EQ(labels(knob_neighbours(points, w8_persistent, "num_workers")),
            (std::vector<std::string>{"w0 pf on ", "w4 pf2 on on"}));
  // Around w0 only pin and workers can move: prefetch and persistence do not apply without workers.
  EXPECT_TRUE(knob_neighbours(points, 0, "prefetch_factor").empty());
  EXPECT_EQ(labels(knob_neighbours(points, 0, "pin_memory")), (std::vector<std::string>{"w0 pf off "}));
  SweepRules rules;
  EXPECT_NE(rules.describe().find("knob by knob"), std::string::npos);
  EXPECT_EQ(rules.to_json()["coordinate"], true);
}

// Before verifying: the fastest point and those whose intervals overlap it, while the recommendation
// (the cheaper of them) is not the fastest: the widest intervals are measured again, the least
// measured first, until they lie apart or each had its most runs.
TEST(SweepRules, PointsNotToldApartFromTheFastestAreRepeatedWidestFirst) {
  SweepRules rules;
  rules.separate_repeats = 4;
  const PointProgress w16 = progress({0.0660, 0.0662, 0.0658, 0.0661, 0.0659}, 3);
  const PointProgress w8 = progress({0.055, 0.070, 0.085, 0.095, 0.102}, 1);     // [55, 102] ms after one run
  const PointProgress w12 = progress({0.060, 0.066, 0.075, 0.080, 0.090}, 2);    // overlaps too
  const PointProgress w4 = progress({0.150, 0.151, 0.149, 0.150, 0.150}, 1);     // apart
  const PointProgress w2 = progress({0.064, 0.070, 0.078, 0.086, 0.100}, 1);     // overlaps, a fourth
  std::vector<std::pair<std::string, const PointProgress*>> measured = {
      {"w2", &w2}, {"w4", &w4}, {"w8", &w8}, {"w12", &w12}, {"w16", &w16}};

  // The case: w8 recommended over w16 because its one run's interval reaches w16's.
  Separation s = separate(measured, "w8", rules);
  EXPECT_FALSE(s.apart);
  // The fastest, the recommended, then the next fastest that overlaps; no more than three.
  EXPECT_EQ(s.contenders, (std::vector<std::string>{"w16", "w12", "w8"}));
  // w16 is measured tightly: only the wide ones, the least measured first.
  EXPECT_EQ(s.repeat, (std::vector<std::string>{"w8", "w12"}));

  // The fastest is what would be recommended: nothing to separate.
  EXPECT_TRUE(separate(measured, "w16", rules).apart);
  EXPECT_TRUE(separate(measured, "w16", rules).repeat.empty());

  // A wide one at its most runs: stop, not told apart; the tight fastest is not run again.
  const PointProgress w8_most = progress(w8.epochs, 4);
  s = separate({{"w8", &w8_most}, {"w16", &w16}}, "w8", rules);
  EXPECT_FALSE(s.apart);
  EXPECT_TRUE(s.most_runs);
  EXPECT_TRUE(s.repeat.empty());
  EXPECT_EQ(s.contenders, (std::vector<std::string>{"w16", "w8"}));
  // Both tight and still overlapping: close points, not run again, and not for want of runs.
  const PointProgress w8_close = progress({0.0661, 0.0663, 0.0662, 0.0664, 0.0665}, 1);
  s = separate({{"w8", &w8_close}, {"w16", &w16}}, "w8", rules);
  EXPECT_FALSE(s.apart);
  EXPECT_FALSE(s.most_runs);
  EXPECT_TRUE(s.repeat.empty());

  // Once the recommended point's interval lies apart from the fastest's, the contest is over.
  const PointProgress w8_apart = progress({0.081, 0.083, 0.085, 0.087, 0.090, 0.084, 0.086}, 3);
  EXPECT_TRUE(separate({{"w8", &w8_apart}, {"w16", &w16}}, "w8", rules).apart);
  EXPECT_NE(rules.describe().find("or have had 4 runs each"), std::string::npos)
      << rules.describe();
}

}  // namespace
}  // namespace ingero::harness

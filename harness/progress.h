// SPDX-License-Identifier: Apache-2.0
// Progress of a long command: on a terminal one live line, rewritten in place; otherwise
// (CI logs, pipes) one plain line per step.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace ingero::harness {

class Progress {
 public:
  explicit Progress(std::FILE* out);
  // "[3/12] loader w4 pf2 · 0m42s elapsed · ETA ~2m10s · best: loader w2 pf2 (0.84 s)"
  void step(int index, int total, const std::string& what, double eta_s, const std::string& best);
  // A line that stays (a decision, a warning), printed above the live line.
  void note(const std::string& line);
  void done();
  double elapsed_s() const;

 private:
  void clear_live_line();
  std::FILE* out_;
  bool live_;
  bool line_open_ = false;
  std::chrono::steady_clock::time_point start_;
};

std::string format_clock(double seconds);  // "1m05s", "42s"

}  // namespace ingero::harness

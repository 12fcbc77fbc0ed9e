// SPDX-License-Identifier: Apache-2.0
#include "harness/progress.h"

#include <unistd.h>

#include <fmt/format.h>

namespace ingero::harness {

std::string format_clock(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

Progress::Progress(std::FILE* out) : out_(out), live_(isatty(fileno(out)) != 0), start_(std::chrono::steady_clock::now()) {}

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::clear_live_line() {
  if (live_ && line_open_) std::fputs("\r\033[K", out_);
  line_open_ = false;
}

void Progress::step(int index, int total, const std::string& what, double eta_s, const std::string& best) {
  const std::string line = fmt::format("[{}/{}] {} · {} elapsed{}{}", index, total, what, format_clock(elapsed_s()),
                                       eta_s > 0 ? " · ETA ~" + format_clock(eta_s) : "",
                                       best.empty() ? "" : " · best: " + best);
  if (live_) {
    clear_live_line();
    std::fputs(line.c_str(), out_);
    line_open_ = true;
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void Progress::note(const std::string& line) {
  clear_live_line();
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void Progress::done() {
  clear_live_line();
  std::fflush(out_);
}

}  // namespace ingero::harness

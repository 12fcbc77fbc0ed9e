// SPDX-License-Identifier: Apache-2.0
// What one probe hit costs on this machine, measured at start-up: the tracer's own CUDA
// probe programs placed on a function of this process, called in a loop that also reads
// 32 KiB per call, timed in the thread's CPU time against the same loop unprobed, entry-only
// and entry + return, over a few alternating rounds (median). Every
// run reports its tracing cost from it (hits x cost, as a share of each thread's time), and
// the duty cycle decides what is hot from it.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "tracer/duty_cycle.h"

namespace ingero::tracer {

// Attaches the probes the calibration times; the tracer's implementation puts its CUDA
// probe programs on calibration_target (tests put fakes).
class CalibrationProbes {
 public:
  virtual ~CalibrationProbes() = default;
  virtual Status attach(bool return_probe) = 0;
  virtual void detach() = 0;
};

struct CalibrationPlan {
  int rounds = 5;     // each: unprobed, entry-only, entry + return
  int calls = 4000;   // per timed loop
};

// A failed attach is an error (the run then says its tracing cost is unknown).
Result<ProbeCost> calibrate_probe_cost(CalibrationProbes& probes, const CalibrationPlan& plan = {});

// The function calibrated on: it adds 1 to *sink. On x86-64 it is written in assembly so that
// it starts with `push %rbp`, as the CUDA libraries' functions do (the kernel emulates that
// instruction: one trap per hit, no single-step), whatever the compiler's flags.
void calibration_target(uint64_t* sink) asm("ingero_calibration_target");

// Where a uprobe goes for calibration_target: this program's file and the function's offset
// in it (from /proc/self/maps).
struct CodeLocation {
  std::string path;
  uint64_t offset = 0;
};
Result<CodeLocation> calibration_target_location();

}  // namespace ingero::tracer

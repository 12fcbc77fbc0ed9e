// SPDX-License-Identifier: Apache-2.0
// The words of worker health (reports/analysis/worker_health.h): what happened, its evidence and
// what to change. Terminal, Markdown/HTML, JSON and MCP answers all take theirs from here.
#pragma once

#include <string>
#include <vector>

#include "reports/analysis/worker_health.h"

namespace ingero::reports {

struct HealthWords {
  std::string title;                  // "OOM kill", "memory growth", ...
  std::string summary;                // one sentence, numbers first
  std::vector<std::string> evidence;  // the curve, the knobs, where each waited
  std::string change;
};

HealthWords describe_health(const HealthFinding& finding);
std::vector<HealthWords> describe_health(const HealthAnalysis& analysis);
// What the health sampler did in the run ("every 500 ms", "off", "not recorded").
std::string health_sampling_text(const HealthAnalysis& analysis);
// What a kernel wait channel (/proc/PID/wchan) is waiting on, in words: "a lock (futex)", ...
std::string wait_channel_text(const std::string& wchan);

}  // namespace ingero::reports

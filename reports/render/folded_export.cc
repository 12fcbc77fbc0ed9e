// SPDX-License-Identifier: Apache-2.0
#include "reports/render/folded_export.h"

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "reports/analysis/profile_analysis.h"
#include "reports/documents/input_errors.h"

namespace ingero::reports {

Result<std::string> folded_profile(const TraceFile& trace, std::optional<int64_t> run_id, const std::string& role) {
  auto run = trace.run(run_id);
  if (!run) return with_flag("--run", run.error());
  auto context = trace.context(*run);
  if (!context) return context.error();
  auto profile = trace.profile(run->run_id, std::nullopt, std::nullopt);
  if (!profile) return profile.error();
  if (profile->empty())
    return Error::bad_input(fmt::format("--run: run {} has no CPU profile ({})", run->run_id,
                                        profile_taken(*context) ? "profiled, but no sample was stored"
                                                                : "profiling was off, or the file predates profiles"),
                            "trace the job again with profiling on (--profile-hz N, N > 0), or pick a profiled run "
                            "(ingero-bench runs --db FILE)");
  const auto stacks = folded_stacks(*context, *profile, role);
  if (stacks.empty())
    return Error::bad_input(fmt::format("--role: run {} has no samples of role '{}'", run->run_id, role),
                            "leave --role out for every thread, or pick a role the run has (main, worker, pin, other)");
  std::string text;
  for (const FoldedStack& stack : stacks) {
    for (size_t i = 0; i < stack.frames.size(); ++i) {
      if (i) text += ';';
      text += stack.frames[i];
    }
    text += fmt::format(" {}\n", stack.samples);
  }
  return text;
}

Status export_folded(const std::string& db_path, std::optional<int64_t> run_id, const std::string& role,
                     const std::string& out_path) {
  if (Status writable = check_writable_path("--out", out_path); !writable) return writable;
  auto trace = TraceFile::open(db_path);
  if (!trace) return with_flag("--db", trace.error());
  auto text = folded_profile(**trace, run_id, role);
  if (!text) return text.error();
  return write_file_atomically(out_path, *text);
}

}  // namespace ingero::reports

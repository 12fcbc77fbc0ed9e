#include <cstdio>

#include <fmt/format.h>

#include "harness/commands.h"
#include "harness/machine_info.h"
#include "harness/signals.h"

namespace ingero::harness {

Result<int> run_trace_command(const TraceFlags& flags, const std::vector<std::string>& command) {
  if (command.empty()) {
    return Error::bad_input("trace needs a command to run", "e.g. ingero-bench trace -- python3 train.py");
  }
  auto db = tracer::TraceDb::open(flags.db);
  if (!db) return db.error();
  RunRequest req;
  req.kind = "command";
  req.argv = command;
  req.label = "trace:";
  for (const auto& a : command) req.label += " " + a;
  // CUDA availability is not probed here: the traced command owns the GPU.
  auto outcome = execute_run(req, **db, flags.settings(), machine_info(std::nullopt).dump());
  if (!outcome) return outcome.error();
  std::fprintf(stderr, "ingero-bench: run %lld: '%s' %s; trace database: %s\n", static_cast<long long>(outcome->run_id),
               command.front().c_str(), outcome->child_exit.c_str(), (*db)->path().c_str());
  if (outcome->trace && outcome->trace->events_dropped > 0) {
    std::fprintf(stderr, "ingero-bench: WARNING: %llu trace events were lost\n",
                 static_cast<unsigned long long>(outcome->trace->events_dropped));
  }
  return outcome->exit_code;
}

}  // namespace ingero::harness

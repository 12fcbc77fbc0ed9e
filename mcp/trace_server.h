// SPDX-License-Identifier: Apache-2.0
// `ingero-bench mcp --db FILE`: the trace tools served over stdio until the client
// closes its end or a stop signal arrives. Responses go to `out` only; everything else to `log`.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

#include "mcp/trace_tools.h"

namespace ingero::mcp {

struct TraceServerOptions {
  std::string version = "0.2.0";  // serverInfo.version: the ingero-bench release
  TraceToolOptions tools;
  // Polled after each message: a signal number ends the session with 128 + it. Empty: never.
  std::function<int()> stop_signal;
};

// Opens the trace DB read-only and serves it. Returns the exit code: 0 at end of input,
// 2 (kExitBadInput) when the DB is missing or not a trace DB (the message and its fix on
// `log`), 1 when `out` fails, 128 + the signal when stop_signal reports one.
int serve_trace_db(const std::string& db_path, std::istream& in, std::ostream& out, std::ostream& log,
                   const TraceServerOptions& options = {});

}  // namespace ingero::mcp

// SPDX-License-Identifier: Apache-2.0
#include "mcp/trace_server.h"

#include <ostream>

#include "mcp/server.h"
#include "mcp/wire.h"

namespace ingero::mcp {

int serve_trace_db(const std::string& db_path, std::istream& in, std::ostream& out, std::ostream& log,
                   const TraceServerOptions& options) {
  auto opened = reports::TraceFile::open(db_path);
  if (!opened) {
    log << "ingero-bench mcp: " << wire::error_text(opened.error()) << '\n';
    return opened.error().exit_code;
  }
  std::shared_ptr<const reports::TraceFile> trace = std::move(*opened);
  for (const auto& note : trace->notes()) log << "mcp: note: " << note << '\n';
  auto registry = make_trace_registry(trace, options.tools);
  if (!registry) {
    log << "ingero-bench mcp: " << wire::error_text(registry.error()) << '\n';
    return registry.error().exit_code;
  }
  Server server(trace_server_info(*trace, options.version), std::move(*registry));
  return server.serve(in, out, log, options.stop_signal);
}

}  // namespace ingero::mcp

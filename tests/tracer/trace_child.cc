// SPDX-License-Identifier: Apache-2.0
// Traces one command and prints what the trace holds: a manual check of the tracer
// on a real machine (e.g. a PyTorch script on a GPU node). Needs root.
//
//   ingero_trace_child [--db PATH] [--cudart LIB] -- COMMAND [ARGS...]
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tests/tracer/trace_run.h"

using namespace ingero::tracer;
using ingero::Result;

int main(int argc, char** argv) {
  std::string db = "/tmp/ingero-trace-child.db";
  TraceOptions opts;
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; ++i) {
    if (!strcmp(argv[i], "--db") && i + 1 < argc) db = argv[++i];
    else if (!strcmp(argv[i], "--cudart") && i + 1 < argc) opts.library_paths.push_back(argv[++i]);
  }
  if (i + 1 >= argc) {
    fprintf(stderr, "usage: %s [--db PATH] [--cudart LIB] -- COMMAND [ARGS...]\n", argv[0]);
    return 2;
  }
  char** command = argv + i + 1;
  unlink(db.c_str());
  auto run = testing::run_traced(db, opts, [&] {
    execvp(command[0], command);
    perror("exec");
    return 127;
  });
  if (!run) {
    fprintf(stderr, "%s (%s)\n", run.error().message.c_str(), run.error().hint.c_str());
    return 1;
  }
  const TraceTotals& s = run->totals;
  printf("wait status %d; events written %llu, dropped %llu; CUDA traced: %s\n", run->wait_status,
         (unsigned long long)s.events_written, (unsigned long long)s.events_lost(), s.calls_traced() ? "yes" : "no");
  for (const ProbedLibrary& lib : s.libraries) {
    printf("probed %s\n", lib.path.c_str());
    for (const std::string& sym : lib.missing) printf("missing %s\n", sym.c_str());
  }
  for (const TraceLoss& loss : s.losses)
    printf("loss %-13s dropped %llu offered %s\n", loss.source.c_str(), (unsigned long long)loss.dropped,
           loss.offered ? std::to_string(*loss.offered).c_str() : "-");
  auto stmt = ingero::sql::Statement::prepare(
      run->db.get(),
      "SELECT o.name, count(*), sum(dur_ns), max(dur_ns), sum(coalesce(bytes, 0)), sum(ret != 0), "
      "count(DISTINCT stream) FROM events e JOIN ops o USING(op) GROUP BY o.name ORDER BY count(*) DESC");
  printf("%-24s %10s %14s %12s %14s %8s %8s\n", "op", "count", "total_us", "max_us", "bytes", "ret!=0", "streams");
  for (auto row = stmt ? stmt->step() : Result<bool>(false); row.ok() && *row; row = stmt->step())
    printf("%-24s %10lld %14.1f %12.1f %14lld %8lld %8lld\n",
           reinterpret_cast<const char*>(sqlite3_column_text(stmt->handle(), 0)), (long long)stmt->column_int(1),
           stmt->column_int(2) / 1e3, stmt->column_int(3) / 1e3, (long long)stmt->column_int(4),
           (long long)stmt->column_int(5), (long long)stmt->column_int(6));
  printf("threads: %lld, processes: %lld, thread_stats rows: %lld, page faults: %lld, involuntary switches: %lld\n",
         (long long)run->query_int("SELECT count(*) FROM threads"),
         (long long)run->query_int("SELECT count(DISTINCT pid) FROM threads"),
         (long long)run->query_int("SELECT count(*) FROM thread_stats"),
         (long long)run->query_int("SELECT sum(page_faults) FROM thread_stats"),
         (long long)run->query_int("SELECT sum(involuntary_switches) FROM thread_stats"));
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
#include "tests/tracer/trace_run.h"

#include <bpf/bpf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "tracer/trace_db.h"

namespace ingero::tracer::testing {

int64_t TracedRun::query_int(const std::string& sql) const {
  auto stmt = sql::Statement::prepare(db.get(), sql);
  if (!stmt) return -1;
  auto row = stmt->step();
  return row.ok() && *row ? stmt->column_int(0) : -1;
}

int64_t TracedRun::setting_int(const std::string& key) const {
  return query_int("SELECT value FROM run_settings WHERE" + where() + "AND key = '" + key + "'");
}

Result<TracedRun> run_traced(const std::string& path, const TraceOptions& opts, const std::function<int()>& child) {
  auto db = TraceDb::open(path);
  if (!db) return db.error();
  RunStart start;
  start.label = "tracer test";
  start.kind = "command";
  start.command = {"test-child"};
  start.machine_json = "{}";
  auto run_id = db->begin_run(start);
  if (!run_id) return run_id.error();

  auto tracer = Tracer::start(opts, path, *run_id);
  if (!tracer) return tracer.error();

  int release[2];
  if (pipe(release) != 0) return Error::failure("pipe failed");
  pid_t pid = fork();
  if (pid == 0) {
    close(release[1]);
    char go;
    if (read(release[0], &go, 1) != 1) _exit(99);
    _exit(child());
  }
  close(release[0]);
  Status enrolled = (*tracer)->enroll(pid);
  if (write(release[1], "g", 1) != 1) return Error::failure("releasing the child failed");
  close(release[1]);
  if (!enrolled) return enrolled.error();

  TracedRun run;
  run.run_id = *run_id;
  run.root_pid = pid;
  for (;;) {
    pid_t done = waitpid(pid, &run.wait_status, WNOHANG);
    if (done == pid) break;
    (*tracer)->poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto totals = (*tracer)->stop();
  if (!totals) return totals.error();
  run.totals = std::move(*totals);
  if (Status s = db->write_totals(*run_id, run.totals); !s) return s.error();
  int exit_code = WIFEXITED(run.wait_status) ? WEXITSTATUS(run.wait_status) : 128 + WTERMSIG(run.wait_status);
  RunEnd end;
  end.exit_code = exit_code;
  end.status = exit_code == 0 ? "ok" : "failed";
  if (Status s = db->finish_run(*run_id, end); !s) return s.error();
  auto reader = sql::open(path, sql::Mode::read_only, 5000);
  if (!reader) return reader.error();
  run.db = std::move(*reader);
  return run;
}

int count_own_bpf_fds() {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    std::string target = std::filesystem::read_symlink(entry.path(), ec).string();
    if (target.find("bpf") != std::string::npos || target.find("perf_event") != std::string::npos) ++count;
  }
  return count;
}

int count_system_bpf_objects() {
  int count = 0;
  for (__u32 id = 0; bpf_prog_get_next_id(id, &id) == 0;) ++count;
  for (__u32 id = 0; bpf_link_get_next_id(id, &id) == 0;) ++count;
  return count;
}

}  // namespace ingero::tracer::testing

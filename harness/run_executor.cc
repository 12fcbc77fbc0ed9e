#include "harness/run_executor.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/wait_status.h"
#include "harness/child_process.h"
#include "harness/signals.h"
#include "workloads/result.h"

namespace ingero::harness {

namespace {

using Clock = std::chrono::steady_clock;

// Waits for the child while the tracer follows it; forwards an interrupt once, then
// SIGKILLs a child that has not exited 10 s later.
int supervise(pid_t pid, tracer::Tracer* tracer) {
  bool forwarded = false;
  Clock::time_point kill_at{};
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return 0;
    if (tracer != nullptr) tracer->poll();
    if (interrupt_requested() && !forwarded) {
      kill(pid, interrupt_signal());
      forwarded = true;
      kill_at = Clock::now() + std::chrono::seconds(10);
    }
    if (forwarded && Clock::now() >= kill_at) kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::vector<tracer::WorkloadEvent> batch_events(const workloads::ResultSummary& s) {
  std::vector<tracer::WorkloadEvent> events;
  events.reserve(s.batches.size() * 2);
  for (const auto& b : s.batches) {
    events.push_back({"batch_wait", b.wait_start_ns, b.wait_ns, s.pid, s.main_tid, b.index});
    events.push_back({"batch_compute", b.wait_start_ns + b.wait_ns, b.compute_ns, s.pid, s.main_tid, b.index});
  }
  return events;
}

// Reads the record the workload child wrote; absent when it died before writing one.
std::optional<nlohmann::json> read_result(const std::optional<std::string>& path) {
  if (!path) return std::nullopt;
  auto text = read_file(*path);
  if (!text) return std::nullopt;
  unlink(path->c_str());
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

}  // namespace

Result<RunOutcome> execute_run(const RunRequest& request, tracer::TraceDb& db, const TraceSettings& trace,
                               const std::string& machine_json) {
  tracer::RunStart start{request.label, request.kind, request.argv, request.config_json, machine_json,
                         trace.enabled, trace.options.system_wide};
  auto run_id = db.begin_run(start);
  if (!run_id) return run_id.error();
  RunOutcome outcome;
  outcome.run_id = *run_id;

  std::unique_ptr<tracer::Tracer> tracer;
  if (trace.enabled) {
    auto t = tracer::Tracer::start(trace.options, db.path(), *run_id);
    if (!t) {
      (void)db.finish_run(*run_id, tracer::RunEnd{1, "failed", std::nullopt});
      return t.error();
    }
    tracer = std::move(t).value();
  }

  auto child = PausedChild::spawn(request.argv);
  if (!child) return child.error();
  if (tracer) {
    if (auto s = tracer->enroll(child->pid()); !s) return s.error();
  }
  (void)db.set_root_pid(*run_id, child->pid());
  if (auto s = child->release(); !s) {
    if (tracer) (void)tracer->stop();
    (void)db.finish_run(*run_id, tracer::RunEnd{127, "failed", std::nullopt});
    return s.error();
  }

  const int status = supervise(child->pid(), tracer.get());
  outcome.exit_code = shell_exit_code(status);
  outcome.child_exit = describe_wait_status(status);
  if (tracer) {
    auto summary = tracer->stop();
    if (summary) {
      outcome.trace = *summary;
    } else {
      std::fprintf(stderr, "ingero-bench: tracer: %s\n", summary.error().message.c_str());
    }
  }

  outcome.result = read_result(request.result_path);
  if (outcome.result) {
    auto summary = workloads::summary_from_json(*outcome.result);
    if (summary) {
      if (auto s = db.add_workload_events(*run_id, batch_events(*summary)); !s) return s.error();
    }
  }
  outcome.status = interrupt_requested() ? "interrupted" : (outcome.exit_code == 0 ? "ok" : "failed");
  tracer::RunEnd end{outcome.exit_code, outcome.status,
                     outcome.result ? std::optional<std::string>(outcome.result->dump()) : std::nullopt};
  if (auto s = db.finish_run(*run_id, end); !s) return s.error();
  return outcome;
}

}  // namespace ingero::harness

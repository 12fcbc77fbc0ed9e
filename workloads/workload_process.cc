// SPDX-License-Identifier: Apache-2.0
#include "workloads/workload_process.h"

#include <torch/torch.h>

#include <sched.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/json_text.h"
#include "workloads/batch_source.h"
#include "workloads/runner.h"

namespace ingero::workloads {

namespace {

volatile sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int sig) {
  g_stop_signal = sig;
  request_stop();
}

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking calls return EINTR and see the flag
  // Ctrl-C, SIGTERM, and the signals that would otherwise end the run with its epochs unsaved
  // (SIGHUP when the terminal goes, SIGQUIT, SIGUSR1, SIGALRM): each stops the run cleanly.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGALRM}) sigaction(sig, &sa, nullptr);
}

// Keeps the first n CPUs this process may use; intra-op threads follow.
Status pin_to_cpus(int n) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return Error::failure("sched_getaffinity failed");
  const int available = CPU_COUNT(&allowed);
  if (n > available) {
    return Error::bad_input(fmt::format("--cpus {} asks for more cores than the {} this process may use", n, available),
                            fmt::format("use --cpus {} or fewer", available));
  }
  cpu_set_t chosen;
  CPU_ZERO(&chosen);
  for (int cpu = 0, taken = 0; cpu < CPU_SETSIZE && taken < n; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) {
      CPU_SET(cpu, &chosen);
      ++taken;
    }
  }
  if (sched_setaffinity(0, sizeof(chosen), &chosen) != 0) return Error::failure("sched_setaffinity failed");
  at::set_num_threads(n);
  return {};
}

int exit_failed(const Error& e) {
  std::fprintf(stderr, "ingero-bench workload: %s\n", e.message.c_str());
  if (!e.hint.empty()) std::fprintf(stderr, "  fix: %s\n", e.hint.c_str());
  return e.exit_code;
}

}  // namespace

int workload_process_main(const std::string& config_json, const std::string& result_path) {
  install_stop_handlers();
  nlohmann::json parsed = parse_json_or_discarded(config_json);
  if (parsed.is_discarded()) return exit_failed(Error::bad_input("the workload configuration is not JSON"));
  auto config = config_from_json(parsed);
  if (!config) return exit_failed(config.error());
  if (auto s = validate(*config); !s) return exit_failed(s.error());
  if (config->cpus > 0) {
    if (auto s = pin_to_cpus(config->cpus); !s) return exit_failed(s.error());
  }
  if (auto device = resolve_device(config->device); !device) return exit_failed(device.error());

  RunResult result;
  result.config = *config;
  int code = 0;
  try {
    const std::string report =
        (std::filesystem::path(result_path).parent_path() / kPreparationReport).string();
    result = run_workload(*config, {}, report);
    // A stop keeps what was measured; the exit code says which signal asked for it.
    if (result.status == contract::record_status::kInterrupted) code = 128 + (g_stop_signal ? g_stop_signal : SIGINT);
  } catch (const std::exception& e) {
    result.status = contract::record_status::kFailed;
    result.error = e.what();
    code = 1;
    std::fprintf(stderr, "ingero-bench workload: %s\n", e.what());
  }
  for (const auto& note : result.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  if (auto s = write_file_atomically(result_path, to_json(result).dump()); !s) return exit_failed(s.error());
  return code;
}

}  // namespace ingero::workloads

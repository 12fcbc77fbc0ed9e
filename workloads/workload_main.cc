// SPDX-License-Identifier: Apache-2.0
// ingero-bench-workload: the LibTorch side of ingero-bench, a program of its own so that
// ingero-bench itself loads no LibTorch (its start-up alone takes most of a second, which
// every explain, report or MCP session would pay). ingero-bench starts it beside itself:
//   ingero-bench-workload --config JSON --result PATH   runs one configuration (a traced run)
//   ingero-bench-workload --cuda-available              prints yes or no (can LibTorch use a GPU)
//   ingero-bench-workload --prepare-dataset JSON --report PATH
//                         writes (or checks) an on-disk dataset in its cache before a run, outside the
//                         trace, and reports what it did (docs/formats.md, "storage")
#include <cstdio>
#include <string>

#include <torch/torch.h>

#include "common/crash_handler.h"
#include "workloads/sample_store.h"
#include "workloads/workload_process.h"

int main(int argc, char** argv) {
  ingero::install_crash_handlers();
  const auto arg = [&](int i) { return std::string(argv[i]); };
  if (argc == 5 && arg(1) == "--config" && arg(3) == "--result")
    return ingero::workloads::workload_process_main(argv[2], argv[4]);
  if (argc == 5 && arg(1) == "--prepare-dataset" && arg(3) == "--report")
    return ingero::workloads::prepare_dataset_main(argv[2], argv[4]);
  if (argc == 2 && arg(1) == "--cuda-available") {
    std::puts(torch::cuda::is_available() ? "yes" : "no");
    return 0;
  }
  std::fputs("usage: ingero-bench-workload --config JSON --result PATH | --prepare-dataset JSON --report PATH | "
             "--cuda-available\n"
             "  (ingero-bench starts this program; run ingero-bench --workload dataloader instead)\n",
             stderr);
  return 2;
}

// SPDX-License-Identifier: Apache-2.0
#include "common/trace_contract.h"

namespace ingero::contract {

namespace {
bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
}  // namespace

std::optional<uint16_t> op_code(std::string_view name) {
  for (const OpInfo& op : kOps)
    if (op.name == name) return op.code;
  return std::nullopt;
}

std::string_view op_name(uint16_t code) { return code < IB_OP_COUNT ? kOps[code].name : "?"; }

bool is_cuda_category(std::string_view c) { return c == category::kCudaRuntime || c == category::kCudaDriver; }

bool is_library_call_category(std::string_view c) { return is_cuda_category(c) || c == category::kNccl; }

int role_rank(std::string_view role) {
  if (role == kRoleMain) return 0;
  if (role == kRolePin) return 1;
  if (role == kRoleWorker) return 2;
  return 3;
}

std::string_view thread_role(std::string_view comm, bool is_main_thread, bool is_root_process) {
  if (starts_with(comm, "ib-worker") || starts_with(comm, "pt_data_worker")) return kRoleWorker;
  if (starts_with(comm, "ib-pin") || starts_with(comm, "pt_data_pin") || starts_with(comm, "pt_pin_memory"))
    return kRolePin;
  if (is_main_thread && is_root_process) return kRoleMain;
  return kRoleOther;
}

const ModeInfo* find_mode(std::string_view name) {
  for (const ModeInfo& mode : kModes)
    if (mode.name == name) return &mode;
  return nullptr;
}

bool loss_drops_events(std::string_view source) {
  for (std::string_view totals_only : {"thread_stats", "task_clocks", "histograms", "call_stats"})
    if (source == totals_only) return false;
  return true;
}

}  // namespace ingero::contract

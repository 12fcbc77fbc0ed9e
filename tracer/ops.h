// The op table (code, name, category) generated from bpf/events.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "bpf/events.h"

namespace ingero::tracer {

struct OpInfo {
  uint16_t code;
  std::string_view name;
  std::string_view category;
};

inline constexpr OpInfo kOps[] = {
#define IB_OP_TABLE_ENTRY(id, name, category) OpInfo{id, name, category},
    IB_OPS(IB_OP_TABLE_ENTRY)
#undef IB_OP_TABLE_ENTRY
};

inline std::optional<uint16_t> op_code(std::string_view name) {
  for (const OpInfo& op : kOps)
    if (op.name == name) return op.code;
  return std::nullopt;
}

inline std::string_view op_name(uint16_t code) { return code < IB_OP_COUNT ? kOps[code].name : "?"; }

}  // namespace ingero::tracer

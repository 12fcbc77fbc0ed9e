// SPDX-License-Identifier: Apache-2.0
// File offsets of a shared library's functions, read once with libelf, so that a probe
// can be detached and attached again many times a second (duty cycling) without libbpf
// opening and searching the library's symbol table on every attach.
#pragma once

#include <libelf.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"

namespace ingero::tracer {

// An Elf handle that ends itself (elf_end).
struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

// The file offset (what a uprobe is placed at) of each named function the library defines,
// from .dynsym, then .symtab. Names it does not define are left out. An unreadable or
// non-ELF file is an error naming it.
Result<std::map<std::string, uint64_t>> function_file_offsets(const std::string& path,
                                                             const std::vector<std::string>& names);

// A loaded segment (PT_LOAD): where its file bytes sit in memory before the load bias.
struct ElfLoadSegment {
  uint64_t vaddr = 0;
  uint64_t offset = 0;
};
// The link-time address (st_value) of each named symbol the file defines, of any type (data
// such as _PyRuntime as well as functions), from .dynsym then .symtab, and its PT_LOAD segments,
// from which a process's mapping of the file gives the load bias.
struct ElfSymbolAddresses {
  std::map<std::string, uint64_t> addresses;
  std::vector<ElfLoadSegment> loads;
};
Result<ElfSymbolAddresses> symbol_addresses(const std::string& path, const std::vector<std::string>& names);

}  // namespace ingero::tracer

// SPDX-License-Identifier: Apache-2.0
// Native and kernel symbols for the CPU profiles: which file an address of a process lies in
// (/proc/PID/maps, read while the process lives), the function at an offset of an ELF file (its
// own .symtab, then .dynsym, and a debug file under /usr/lib/debug/.build-id where one is
// installed), cached by build id, and the kernel's functions (/proc/kallsyms).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ingero::tracer {

// One executable mapping of a process.
struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0;  // in the file
  uint64_t inode = 0;
  std::string path;     // "" for anonymous memory (JIT code, ...)
};

// The executable mappings of /proc/PID/maps text, by start address.
std::vector<Mapping> parse_executable_mappings(const std::string& maps_text);
// nullptr when none covers addr.
const Mapping* mapping_of(const std::vector<Mapping>& mappings, uint64_t addr);

// A function symbol of one ELF file: its virtual address range and its name (demangled).
struct FunctionSymbol {
  uint64_t addr = 0;
  uint64_t size = 0;
  std::string name;
};

// The functions of one ELF file, for looking up file offsets.
class ElfFunctions {
 public:
  // nullptr when the file cannot be read or is not ELF. `why` says why.
  static std::unique_ptr<ElfFunctions> load(const std::string& path, std::string* why = nullptr);
  const std::string& build_id() const { return build_id_; }  // hex; "" when the file has none
  // The function covering a file offset (of an executable segment), or nullopt.
  std::optional<std::string> function_at_offset(uint64_t offset) const;
  size_t size() const { return functions_.size(); }

 private:
  struct Segment {
    uint64_t offset, filesz, vaddr;
  };
  std::string build_id_;
  std::vector<Segment> segments_;
  std::vector<FunctionSymbol> functions_;  // sorted by addr
};

// ElfFunctions per file, loaded once per build id (a file without one: per path and inode).
class SymbolCache {
 public:
  // The function at `offset` of `path`, or nullopt where no symbol covers it or the file is unreadable.
  std::optional<std::string> function_at(const std::string& path, uint64_t inode, uint64_t offset);
  size_t files_loaded() const { return by_id_.size(); }

 private:
  std::map<std::pair<std::string, uint64_t>, const ElfFunctions*> by_file_;
  std::map<std::string, std::unique_ptr<ElfFunctions>> by_id_;
};

// The kernel's text symbols from /proc/kallsyms (addresses are zero without root).
class KernelSymbols {
 public:
  static KernelSymbols load(const std::string& path = "/proc/kallsyms");
  // The function and its module ("" for the kernel itself), or nullopt.
  struct Found {
    std::string name;
    std::string module;
  };
  std::optional<Found> find(uint64_t addr) const;
  bool empty() const { return symbols_.empty(); }

 private:
  struct Symbol {
    uint64_t addr;
    std::string name;
    std::string module;
  };
  std::vector<Symbol> symbols_;  // sorted by addr
};

// A C++ name demangled, others as they are.
std::string demangle(const std::string& name);

}  // namespace ingero::tracer

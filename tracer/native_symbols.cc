// SPDX-License-Identifier: Apache-2.0
#include "tracer/native_symbols.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/unique_fd.h"
#include "tracer/elf_symbols.h"

namespace ingero::tracer {

namespace {

// An open ELF file and the descriptor it reads from (libelf keeps reading it).
struct OpenElf {
  UniqueFd fd;
  ElfPtr elf;
};

std::optional<OpenElf> open_elf(const std::string& path, std::string* why) {
  if (elf_version(EV_CURRENT) == EV_NONE) {
    if (why) *why = "libelf is unusable";
    return std::nullopt;
  }
  OpenElf f;
  f.fd.reset(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!f.fd) {
    if (why) *why = fmt::format("cannot open {}: {}", path, strerror(errno));
    return std::nullopt;
  }
  f.elf.reset(elf_begin(f.fd.get(), ELF_C_READ_MMAP, nullptr));
  if (!f.elf || elf_kind(f.elf.get()) != ELF_K_ELF) {
    if (why) *why = fmt::format("{} is not an ELF file", path);
    return std::nullopt;
  }
  return f;
}

// The GNU build id of an ELF file in hex, from its notes; "" when it has none.
std::string read_build_id(Elf* elf) {
  Elf_Scn* section = nullptr;
  while ((section = elf_nextscn(elf, section)) != nullptr) {
    GElf_Shdr header;
    if (!gelf_getshdr(section, &header) || header.sh_type != SHT_NOTE) continue;
    Elf_Data* data = elf_getdata(section, nullptr);
    if (!data) continue;
    GElf_Nhdr note;
    size_t offset = 0, name_at = 0, desc_at = 0, next = 0;
    while ((next = gelf_getnote(data, offset, &note, &name_at, &desc_at)) > 0) {
      const char* base = static_cast<const char*>(data->d_buf);
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && memcmp(base + name_at, "GNU", 4) == 0) {
        std::string hex;
        for (size_t i = 0; i < note.n_descsz; ++i) hex += fmt::format("{:02x}", static_cast<uint8_t>(base[desc_at + i]));
        return hex;
      }
      offset = next;
    }
  }
  return "";
}

// The defined functions of every symbol table of one type.
void read_functions(Elf* elf, Elf64_Word type, std::vector<FunctionSymbol>& into) {
  Elf_Scn* section = nullptr;
  while ((section = elf_nextscn(elf, section)) != nullptr) {
    GElf_Shdr header;
    if (!gelf_getshdr(section, &header) || header.sh_type != type || header.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(section, nullptr);
    if (!data) continue;
    const size_t count = header.sh_size / header.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
      const int kind = GELF_ST_TYPE(sym.st_info);
      if ((kind != STT_FUNC && kind != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
      const char* name = elf_strptr(elf, header.sh_link, sym.st_name);
      if (!name || !*name) continue;
      into.push_back({sym.st_value, sym.st_size, name});
    }
  }
}

}  // namespace

std::vector<Mapping> parse_executable_mappings(const std::string& maps_text) {
  std::vector<Mapping> mappings;
  std::istringstream lines(maps_text);
  std::string line;
  while (std::getline(lines, line)) {
    // start-end perms offset dev inode [path]
    unsigned long long start = 0, end = 0, offset = 0, inode = 0;
    char perms[8] = {};
    int path_at = 0;
    if (sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %llu %n", &start, &end, perms, &offset, &inode, &path_at) < 5)
      continue;
    if (perms[2] != 'x') continue;
    Mapping m{start, end, offset, inode, path_at > 0 ? line.substr(static_cast<size_t>(path_at)) : ""};
    if (!m.path.empty() && m.path.front() != '/') m.path.clear();  // [vdso], [stack], ...: no file
    mappings.push_back(std::move(m));
  }
  std::sort(mappings.begin(), mappings.end(), [](const Mapping& a, const Mapping& b) { return a.start < b.start; });
  return mappings;
}

const Mapping* mapping_of(const std::vector<Mapping>& mappings, uint64_t addr) {
  auto it = std::upper_bound(mappings.begin(), mappings.end(), addr,
                             [](uint64_t a, const Mapping& m) { return a < m.start; });
  if (it == mappings.begin()) return nullptr;
  --it;
  return addr < it->end ? &*it : nullptr;
}

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), free);
  return status == 0 && out ? std::string(out.get()) : name;
}

std::unique_ptr<ElfFunctions> ElfFunctions::load(const std::string& path, std::string* why) {
  auto file = open_elf(path, why);
  if (!file) return nullptr;
  auto result = std::make_unique<ElfFunctions>();
  Elf* elf = file->elf.get();
  result->build_id_ = read_build_id(elf);
  size_t count = 0;
  if (elf_getphdrnum(elf, &count) == 0)
    for (size_t i = 0; i < count; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
        result->segments_.push_back({ph.p_offset, ph.p_filesz, ph.p_vaddr});
    }
  std::vector<FunctionSymbol> functions;
  read_functions(elf, SHT_SYMTAB, functions);
  read_functions(elf, SHT_DYNSYM, functions);
  // A stripped file's full table may be installed apart (Debian's -dbgsym packages).
  if (!result->build_id_.empty() && result->build_id_.size() > 2) {
    const std::string debug = fmt::format("/usr/lib/debug/.build-id/{}/{}.debug", result->build_id_.substr(0, 2),
                                          result->build_id_.substr(2));
    if (auto debug_file = open_elf(debug, nullptr)) read_functions(debug_file->elf.get(), SHT_SYMTAB, functions);
  }
  // The first name of each address wins (.symtab before .dynsym); the longest size is kept.
  std::stable_sort(functions.begin(), functions.end(),
                   [](const FunctionSymbol& a, const FunctionSymbol& b) { return a.addr < b.addr; });
  for (FunctionSymbol& f : functions) {
    if (!result->functions_.empty() && result->functions_.back().addr == f.addr) {
      result->functions_.back().size = std::max(result->functions_.back().size, f.size);
      continue;
    }
    result->functions_.push_back(std::move(f));
  }
  return result;
}

std::optional<std::string> ElfFunctions::function_at_offset(uint64_t offset) const {
  for (const Segment& s : segments_) {
    if (offset < s.offset || offset >= s.offset + s.filesz) continue;
    const uint64_t vaddr = offset - s.offset + s.vaddr;
    auto it = std::upper_bound(functions_.begin(), functions_.end(), vaddr,
                               [](uint64_t a, const FunctionSymbol& f) { return a < f.addr; });
    if (it == functions_.begin()) return std::nullopt;
    --it;
    // A symbol of size 0 (hand-written assembly) covers up to the next one.
    if (it->size != 0 && vaddr >= it->addr + it->size) return std::nullopt;
    return demangle(it->name);
  }
  return std::nullopt;
}

std::optional<std::string> SymbolCache::function_at(const std::string& path, uint64_t inode, uint64_t offset) {
  const auto key = std::make_pair(path, inode);
  auto found = by_file_.find(key);
  if (found == by_file_.end()) {
    const ElfFunctions* functions = nullptr;
    if (auto loaded = ElfFunctions::load(path)) {
      struct stat st {};
      // A file replaced since it was mapped is another file: its symbols would be wrong.
      if (inode == 0 || (stat(path.c_str(), &st) == 0 && st.st_ino == inode)) {
        const std::string id = loaded->build_id().empty() ? fmt::format("{}:{}", path, inode) : loaded->build_id();
        auto [it, fresh] = by_id_.try_emplace(id, std::move(loaded));
        functions = it->second.get();
      }
    }
    found = by_file_.emplace(key, functions).first;
  }
  if (!found->second) return std::nullopt;
  return found->second->function_at_offset(offset);
}

KernelSymbols KernelSymbols::load(const std::string& path) {
  KernelSymbols k;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long addr = 0;
    char type = 0;
    char name[256] = {}, module[128] = {};
    const int n = sscanf(line.c_str(), "%llx %c %255s [%127[^]]]", &addr, &type, name, module);
    if (n < 3 || addr == 0) continue;
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    k.symbols_.push_back({addr, name, n == 4 ? module : ""});
  }
  std::sort(k.symbols_.begin(), k.symbols_.end(), [](const Symbol& a, const Symbol& b) { return a.addr < b.addr; });
  return k;
}

std::optional<KernelSymbols::Found> KernelSymbols::find(uint64_t addr) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), addr,
                             [](uint64_t a, const Symbol& s) { return a < s.addr; });
  if (it == symbols_.begin()) return std::nullopt;
  --it;
  return Found{it->name, it->module};
}

}  // namespace ingero::tracer

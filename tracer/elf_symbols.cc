// SPDX-License-Identifier: Apache-2.0
#include "tracer/elf_symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "common/unique_fd.h"

namespace ingero::tracer {

namespace {

// A virtual address of a loaded segment as an offset in the file (PT_LOAD: vaddr -> offset).
bool vaddr_to_offset(Elf* elf, uint64_t vaddr, uint64_t& offset) {
  size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0) return false;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
      offset = vaddr - ph.p_vaddr + ph.p_offset;
      return true;
    }
  }
  return false;
}

// The wanted names among the defined symbols (functions only, if asked) of the ELF's .dynsym, then
// .symtab, each with value_of(symbol) where it has one; a name found is no longer wanted.
template <typename ValueOf>
std::map<std::string, uint64_t> find_wanted(Elf* elf, std::set<std::string> wanted, bool functions_only,
                                            ValueOf&& value_of) {
  std::map<std::string, uint64_t> found;
  for (Elf64_Word type : {SHT_DYNSYM, SHT_SYMTAB}) {
    Elf_Scn* section = nullptr;
    while ((section = elf_nextscn(elf, section)) != nullptr && !wanted.empty()) {
      GElf_Shdr header;
      if (!gelf_getshdr(section, &header) || header.sh_type != type || header.sh_entsize == 0) continue;
      Elf_Data* data = elf_getdata(section, nullptr);
      if (!data) continue;
      const size_t count = header.sh_size / header.sh_entsize;
      for (size_t i = 0; i < count && !wanted.empty(); ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
        if (functions_only && GELF_ST_TYPE(sym.st_info) != STT_FUNC) continue;
        const char* name = elf_strptr(elf, header.sh_link, sym.st_name);
        if (!name) continue;
        auto it = wanted.find(name);
        if (it == wanted.end()) continue;
        if (std::optional<uint64_t> value = value_of(sym)) {
          found.emplace(*it, *value);
          wanted.erase(it);
        }
      }
    }
  }
  return found;
}

Result<ElfPtr> open_elf(const std::string& path, UniqueFd& fd, const std::string& hint = "") {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error::failure("libelf is unusable (elf_version failed)");
  fd = UniqueFd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::bad_input(fmt::format("cannot open {}: {}", path, strerror(errno)));
  ElfPtr elf(elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return Error::bad_input(fmt::format("{} is not an ELF file", path), hint);
  return elf;
}

}  // namespace

Result<ElfSymbolAddresses> symbol_addresses(const std::string& path, const std::vector<std::string>& names) {
  UniqueFd fd;
  auto elf = open_elf(path, fd);
  if (!elf) return elf.error();
  ElfSymbolAddresses out;
  size_t count = 0;
  if (elf_getphdrnum(elf->get(), &count) == 0) {
    for (size_t i = 0; i < count; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf->get(), static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
        out.loads.push_back({ph.p_vaddr, ph.p_offset});
    }
  }
  out.addresses = find_wanted(elf->get(), {names.begin(), names.end()}, false,
                              [](const GElf_Sym& sym) -> std::optional<uint64_t> { return sym.st_value; });
  return out;
}

Result<std::map<std::string, uint64_t>> function_file_offsets(const std::string& path,
                                                             const std::vector<std::string>& names) {
  UniqueFd fd;
  auto elf = open_elf(path, fd, "pass a shared library (.so)");
  if (!elf) return elf.error();
  Elf* e = elf->get();
  return find_wanted(e, {names.begin(), names.end()}, true, [e](const GElf_Sym& sym) -> std::optional<uint64_t> {
    uint64_t offset = 0;
    if (!vaddr_to_offset(e, sym.st_value, offset)) return std::nullopt;
    return offset;
  });
}

}  // namespace ingero::tracer

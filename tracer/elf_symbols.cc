// SPDX-License-Identifier: Apache-2.0
#include "tracer/elf_symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "common/unique_fd.h"

namespace ingero::tracer {

namespace {

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

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

// Defined functions of one symbol table section that are still wanted.
void scan_symbols(Elf* elf, Elf_Scn* section, const GElf_Shdr& header, std::set<std::string>& wanted,
                  std::map<std::string, uint64_t>& found) {
  Elf_Data* data = elf_getdata(section, nullptr);
  if (!data || header.sh_entsize == 0) return;
  const size_t count = header.sh_size / header.sh_entsize;
  for (size_t i = 0; i < count && !wanted.empty(); ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
    if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
    const char* name = elf_strptr(elf, header.sh_link, sym.st_name);
    if (!name) continue;
    auto it = wanted.find(name);
    if (it == wanted.end()) continue;
    uint64_t offset = 0;
    if (!vaddr_to_offset(elf, sym.st_value, offset)) continue;
    found.emplace(*it, offset);
    wanted.erase(it);
  }
}

// Defined symbols of any type, by link-time address, that are still wanted.
void scan_addresses(Elf* elf, Elf_Scn* section, const GElf_Shdr& header, std::set<std::string>& wanted,
                    std::map<std::string, uint64_t>& found) {
  Elf_Data* data = elf_getdata(section, nullptr);
  if (!data || header.sh_entsize == 0) return;
  const size_t count = header.sh_size / header.sh_entsize;
  for (size_t i = 0; i < count && !wanted.empty(); ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
    const char* name = elf_strptr(elf, header.sh_link, sym.st_name);
    if (!name) continue;
    auto it = wanted.find(name);
    if (it == wanted.end()) continue;
    found.emplace(*it, sym.st_value);
    wanted.erase(it);
  }
}

Result<ElfPtr> open_elf(const std::string& path, UniqueFd& fd) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error::failure("libelf is unusable (elf_version failed)");
  fd = UniqueFd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::bad_input(fmt::format("cannot open {}: {}", path, strerror(errno)));
  ElfPtr elf(elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return Error::bad_input(fmt::format("{} is not an ELF file", path));
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
  std::set<std::string> wanted(names.begin(), names.end());
  for (Elf64_Word type : {SHT_DYNSYM, SHT_SYMTAB}) {
    Elf_Scn* section = nullptr;
    while ((section = elf_nextscn(elf->get(), section)) != nullptr && !wanted.empty()) {
      GElf_Shdr header;
      if (gelf_getshdr(section, &header) && header.sh_type == type)
        scan_addresses(elf->get(), section, header, wanted, out.addresses);
    }
  }
  return out;
}

Result<std::map<std::string, uint64_t>> function_file_offsets(const std::string& path,
                                                             const std::vector<std::string>& names) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error::failure("libelf is unusable (elf_version failed)");
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::bad_input(fmt::format("cannot open {}: {}", path, strerror(errno)));
  ElfPtr elf(elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
    return Error::bad_input(fmt::format("{} is not an ELF file", path), "pass a shared library (.so)");
  std::set<std::string> wanted(names.begin(), names.end());
  std::map<std::string, uint64_t> found;
  for (Elf64_Word type : {SHT_DYNSYM, SHT_SYMTAB}) {
    Elf_Scn* section = nullptr;
    while ((section = elf_nextscn(elf.get(), section)) != nullptr && !wanted.empty()) {
      GElf_Shdr header;
      if (gelf_getshdr(section, &header) && header.sh_type == type) scan_symbols(elf.get(), section, header, wanted, found);
    }
  }
  return found;
}

}  // namespace ingero::tracer

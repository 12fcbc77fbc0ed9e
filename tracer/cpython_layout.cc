// SPDX-License-Identifier: Apache-2.0
#include "tracer/cpython_layout.h"

#include <sys/stat.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "tracer/elf_symbols.h"

namespace ingero::tracer {

namespace {

constexpr size_t kMaxStringChars = 4096;     // a name or path longer than this is cut
constexpr size_t kMaxLineTableBytes = 1 << 20;  // a larger table is not a line table

uint32_t minor_of(uint32_t version_hex) { return (version_hex >> 16) & 0xff; }
uint32_t major_of(uint32_t version_hex) { return version_hex >> 24; }

// One line of /proc/PID/maps that maps a file.
struct FileMapping {
  uint64_t start = 0;
  uint64_t offset = 0;
  std::string path;
};

Result<std::vector<FileMapping>> read_file_mappings(pid_t pid) {
  const std::string maps_path = fmt::format("/proc/{}/maps", pid);
  std::ifstream in(maps_path);
  if (!in) return Error::bad_input(fmt::format("no process {} ({} is unreadable)", pid, maps_path));
  std::vector<FileMapping> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    if (!(fields >> range >> perms >> offset >> dev >> inode)) continue;
    std::getline(fields >> std::ws, path);
    if (path.empty() || path[0] != '/') continue;
    FileMapping m;
    m.start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    m.offset = std::stoull(offset, nullptr, 16);
    m.path = path;
    out.push_back(std::move(m));
  }
  return out;
}

std::string basename_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The load bias of `path` in the process: a mapping of the file at the page of a PT_LOAD
// segment's file offset is that segment, loaded at start.
bool load_bias_of(const std::vector<FileMapping>& maps, const std::string& path, const ElfSymbolAddresses& elf,
                  uint64_t& bias) {
  constexpr uint64_t kPage = 0xfff;
  for (const auto& m : maps) {
    if (m.path != path) continue;
    for (const auto& seg : elf.loads) {
      if ((seg.offset & ~kPage) == m.offset) {
        bias = m.start - (seg.vaddr & ~kPage);
        return true;
      }
    }
  }
  return false;
}

// A file of the process as this process can open it (through the process's root: containers).
std::string proc_root_path(pid_t pid, const std::string& path) { return fmt::format("/proc/{}/root{}", pid, path); }

struct FoundSymbols {
  std::string path;
  uint64_t bias = 0;
  std::map<std::string, uint64_t> addresses;  // loaded addresses
};

// The first mapped file whose name matches `pattern` and which defines `key`, with the loaded
// addresses of the `names` it defines.
Result<FoundSymbols> find_symbols(pid_t pid, const std::vector<FileMapping>& maps, const std::regex& pattern,
                                  const std::string& key, const std::vector<std::string>& names) {
  std::set<std::string> seen;
  std::vector<std::string> candidates;
  for (const auto& m : maps) {
    if (!seen.insert(m.path).second || !std::regex_search(basename_of(m.path), pattern)) continue;
    candidates.push_back(m.path);
    auto elf = symbol_addresses(proc_root_path(pid, m.path), names);
    if (!elf || !elf->addresses.count(key)) continue;
    FoundSymbols found;
    found.path = m.path;
    if (!load_bias_of(maps, m.path, *elf, found.bias))
      return Error::failure(fmt::format("the load address of {} in process {} is not in its maps", m.path, pid));
    for (const auto& [name, addr] : elf->addresses) found.addresses[name] = addr + found.bias;
    return found;
  }
  if (candidates.empty()) return Error::failure(fmt::format("process {} maps no python binary or libpython", pid));
  return Error::failure(fmt::format("{} does not export {} (a static or stripped build)", candidates.front(), key));
}

// --- Layout tables (offsets measured with offsetof against each version's own headers, 3.10.13,
// 3.11.2, 3.11.7 and 3.12.1; CPython keeps these internal structs fixed within a minor version;
// the 3.12 offsets also read right inside Ubuntu 24.04's 3.12.3). ---

ib_python_layout layout_common() {
  ib_python_layout l{};
  l.object_type = 8;
  l.var_size = 16;
  l.bytes_data = 32;
  l.str_length = 16;
  l.str_state = 32;
  l.owner_cstack = IB_PY_NO_FIELD;
  l.frame_owner = IB_PY_NO_FIELD;
  l.code_adaptive = IB_PY_NO_FIELD;
  l.tstate_native_thread_id = IB_PY_NO_FIELD;
  l.pthread_tid = IB_PY_NO_FIELD;
  return l;
}

ib_python_layout layout_310() {
  ib_python_layout l = layout_common();
  l.thread_match = IB_PY_MATCH_PTHREAD_TID;
  l.runtime_interp_head = 32;
  l.interp_threads_head = 8;  // tstate_head
  l.tstate_next = 8;
  l.tstate_thread_id = 176;
  l.tstate_cframe = IB_PY_NO_FIELD;
  l.cframe_current_frame = 24;  // tstate->frame (PyFrameObject *)
  l.frame_previous = 24;        // f_back
  l.frame_code = 32;
  l.frame_instr = 96;  // int f_lasti
  l.frame_instr_is_lasti = 1;
  l.code_name = 112;  // co_name: 3.10 has no co_qualname
  l.code_filename = 104;
  l.code_firstlineno = 40;
  l.code_linetable = 120;
  l.str_ascii_data = 48;
  l.str_compact_data = 72;
  return l;
}

ib_python_layout layout_311() {
  ib_python_layout l = layout_common();
  l.thread_match = IB_PY_MATCH_NATIVE_TID;
  l.runtime_interp_head = 40;
  l.interp_threads_head = 16;
  l.tstate_next = 8;
  l.tstate_thread_id = 152;
  l.tstate_native_thread_id = 160;
  l.tstate_cframe = 56;
  l.cframe_current_frame = 8;
  l.frame_previous = 48;
  l.frame_code = 32;
  l.frame_instr = 56;  // prev_instr
  l.frame_owner = 69;
  l.code_name = 128;  // co_qualname
  l.code_filename = 112;
  l.code_firstlineno = 72;
  l.code_linetable = 136;
  l.code_adaptive = 184;
  l.str_ascii_data = 48;
  l.str_compact_data = 72;
  return l;
}

ib_python_layout layout_312() {
  ib_python_layout l = layout_common();
  l.thread_match = IB_PY_MATCH_NATIVE_TID;
  l.runtime_interp_head = 40;
  l.interp_threads_head = 72;
  l.tstate_next = 8;
  l.tstate_thread_id = 136;
  l.tstate_native_thread_id = 144;
  l.tstate_cframe = 56;  // 3.12 still has _PyCFrame; 3.13 dropped it
  l.cframe_current_frame = 0;
  l.frame_previous = 8;
  l.frame_code = 0;
  l.frame_instr = 56;  // prev_instr
  l.frame_owner = 70;
  l.owner_cstack = 3;  // FRAME_OWNED_BY_CSTACK
  l.code_name = 128;
  l.code_filename = 112;
  l.code_firstlineno = 68;
  l.code_linetable = 136;
  l.code_adaptive = 192;
  l.str_ascii_data = 40;
  l.str_compact_data = 56;
  return l;
}

// 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h), every field a uint64_t, at the
// start of _PyRuntime. Its layout is fixed within 3.13; 3.14 changed it.
struct DebugOffsets313 {
  char cookie[8];
  uint64_t version;
  uint64_t free_threaded;
  struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
  struct {
    uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins, ceval_gil, gil_runtime_state,
        gil_runtime_state_enabled, gil_runtime_state_locked, gil_runtime_state_holder;
  } interpreter_state;
  struct {
    uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk, status;
  } thread_state;
  struct { uint64_t size, previous, executable, instr_ptr, localsplus, owner; } interpreter_frame;
  struct {
    uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames, localspluskinds,
        co_code_adaptive;
  } code_object;
  struct { uint64_t size, ob_type; } pyobject;
  struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
  struct { uint64_t size, ob_item, ob_size; } tuple_object;
  struct { uint64_t size, ob_item, ob_size; } list_object;
  struct { uint64_t size, ma_keys, ma_values; } dict_object;
  struct { uint64_t size, ob_fval; } float_object;
  struct { uint64_t size, lv_tag, ob_digit; } long_object;
  struct { uint64_t size, ob_size, ob_sval; } bytes_object;
  struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
  struct { uint64_t size, collecting; } gc;
};
static_assert(sizeof(DebugOffsets313) == 73 * 8);

// An offset from the debug offsets, which must fit the struct it is in (a garbage read gives huge ones).
bool fits(uint64_t offset, uint64_t limit, uint32_t& out) {
  if (offset >= limit) return false;
  out = static_cast<uint32_t>(offset);
  return true;
}

Result<ib_python_layout> layout_313(MemoryReader& memory, uint64_t runtime_addr, uint32_t version_hex) {
  DebugOffsets313 d{};
  if (!memory.read_value(runtime_addr, d))
    return Error::failure(fmt::format("_Py_DebugOffsets at {:#x} is unreadable", runtime_addr));
  if (std::memcmp(d.cookie, "xdebugpy", 8) != 0)
    return Error::failure("_PyRuntime does not start with _Py_DebugOffsets (its cookie is not \"xdebugpy\")");
  if ((d.version >> 16) != (version_hex >> 16))
    return Error::failure(fmt::format("_Py_DebugOffsets is for version {:#x}, Py_Version says {:#x}", d.version,
                                      version_hex));
  if (d.free_threaded) return Error::failure("a free-threaded (no-GIL) CPython build is not supported");
  ib_python_layout l = layout_common();
  l.thread_match = IB_PY_MATCH_NATIVE_TID;
  l.tstate_cframe = IB_PY_NO_FIELD;
  l.owner_cstack = 3;  // FRAME_OWNED_BY_CSTACK, not in the debug offsets
  constexpr uint64_t kObject = 4096;  // no field we read lies further into its object
  bool ok = fits(d.runtime_state.interpreters_head, d.runtime_state.size, l.runtime_interp_head) &&
            fits(d.interpreter_state.threads_head, d.interpreter_state.size, l.interp_threads_head) &&
            fits(d.thread_state.next, d.thread_state.size, l.tstate_next) &&
            fits(d.thread_state.thread_id, d.thread_state.size, l.tstate_thread_id) &&
            fits(d.thread_state.native_thread_id, d.thread_state.size, l.tstate_native_thread_id) &&
            fits(d.thread_state.current_frame, d.thread_state.size, l.cframe_current_frame) &&
            fits(d.interpreter_frame.previous, d.interpreter_frame.size, l.frame_previous) &&
            fits(d.interpreter_frame.executable, d.interpreter_frame.size, l.frame_code) &&
            fits(d.interpreter_frame.instr_ptr, d.interpreter_frame.size, l.frame_instr) &&
            fits(d.interpreter_frame.owner, d.interpreter_frame.size, l.frame_owner) &&
            fits(d.pyobject.ob_type, d.pyobject.size, l.object_type) &&
            fits(d.code_object.qualname, d.code_object.size, l.code_name) &&
            fits(d.code_object.filename, d.code_object.size, l.code_filename) &&
            fits(d.code_object.firstlineno, d.code_object.size, l.code_firstlineno) &&
            fits(d.code_object.linetable, d.code_object.size, l.code_linetable) &&
            fits(d.code_object.co_code_adaptive, d.code_object.size + 1, l.code_adaptive) &&
            fits(d.bytes_object.ob_size, d.bytes_object.size, l.var_size) &&
            fits(d.bytes_object.ob_sval, d.bytes_object.size, l.bytes_data) &&
            fits(d.unicode_object.length, d.unicode_object.size, l.str_length) &&
            fits(d.unicode_object.state, d.unicode_object.size, l.str_state) &&
            fits(d.unicode_object.asciiobject_size, kObject, l.str_ascii_data);
  if (!ok) return Error::failure("_Py_DebugOffsets holds an offset outside its struct (not a 3.13 layout)");
  // PyCompactUnicodeObject is PyASCIIObject then utf8_length and utf8 (3.12+).
  l.str_compact_data = l.str_ascii_data + 16;
  return l;
}

// The version from a file name (python3.10, libpython3.10.so.1.0), for 3.10, which has no Py_Version.
bool version_from_name(const std::string& path, uint32_t& version_hex) {
  static const std::regex kName(R"(python(\d)\.(\d+))");
  std::smatch m;
  const std::string base = basename_of(path);
  if (!std::regex_search(base, m, kName)) return false;
  version_hex = (std::stoul(m[1]) << 24) | (std::stoul(m[2]) << 16);
  return true;
}

std::string version_text(uint32_t version_hex) {
  if ((version_hex & 0xffff) == 0) return fmt::format("{}.{}", major_of(version_hex), minor_of(version_hex));
  return fmt::format("{}.{}.{}", major_of(version_hex), minor_of(version_hex), (version_hex >> 8) & 0xff);
}

// --- Strings and line tables ---

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x110000) {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += "\xef\xbf\xbd";  // U+FFFD
  }
}

// A str object as UTF-8: compact ASCII, or compact latin-1 / UCS-2 / UCS-4 (every str a code
// object holds is compact), at most kMaxStringChars code points.
Result<std::string> read_str(const ib_python_layout& l, MemoryReader& memory, uint64_t obj) {
  int64_t length = 0;
  uint32_t state = 0;
  if (!obj || !memory.read_value(obj + l.str_length, length) || !memory.read_value(obj + l.str_state, state))
    return Error::failure(fmt::format("str at {:#x} is unreadable", obj));
  const uint32_t kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
  if (!compact || length < 0 || (kind != 1 && kind != 2 && kind != 4))
    return Error::failure(fmt::format("str at {:#x} is not a compact str (state {:#x})", obj, state));
  const size_t chars = std::min<size_t>(static_cast<size_t>(length), kMaxStringChars);
  const uint64_t data = obj + (ascii ? l.str_ascii_data : l.str_compact_data);
  std::string raw(chars * kind, '\0');
  if (chars && !memory.read(data, raw.data(), raw.size()))
    return Error::failure(fmt::format("str data at {:#x} is unreadable", data));
  if (ascii) return raw;
  std::string out;
  out.reserve(chars);
  for (size_t i = 0; i < chars; ++i) {
    uint32_t cp = 0;
    std::memcpy(&cp, raw.data() + i * kind, kind);  // little-endian hosts only (x86-64, arm64)
    append_utf8(out, cp);
  }
  return out;
}

Result<std::string> read_bytes(const ib_python_layout& l, MemoryReader& memory, uint64_t obj) {
  int64_t size = 0;
  if (!obj || !memory.read_value(obj + l.var_size, size) || size < 0 || static_cast<uint64_t>(size) > kMaxLineTableBytes)
    return Error::failure(fmt::format("bytes at {:#x} are unreadable", obj));
  std::string out(static_cast<size_t>(size), '\0');
  if (size && !memory.read(obj + l.bytes_data, out.data(), out.size()))
    return Error::failure(fmt::format("bytes at {:#x} are unreadable", obj));
  return out;
}

uint32_t read_varint(const std::string& t, size_t& i) {
  uint32_t byte = i < t.size() ? static_cast<uint8_t>(t[i++]) : 0;
  uint32_t value = byte & 63;
  uint32_t shift = 0;
  while ((byte & 64) && i < t.size() && shift < 30) {
    byte = static_cast<uint8_t>(t[i++]);
    shift += 6;
    value |= (byte & 63) << shift;
  }
  return value;
}

int read_signed_varint(const std::string& t, size_t& i) {
  const uint32_t v = read_varint(t, i);
  return (v & 1) ? -static_cast<int>(v >> 1) : static_cast<int>(v >> 1);
}

template <class T>
bool read_ptr(MemoryReader& memory, uint64_t addr, T& out) {
  static_assert(sizeof(T) == 8);
  return memory.read_value(addr, out);
}

Error unreadable(const char* what, uint64_t addr) {
  return Error::failure(fmt::format("{} at {:#x} is unreadable", what, addr));
}

}  // namespace

bool ProcessMemory::read(uint64_t addr, void* out, size_t len) {
  if (len == 0) return true;
  iovec local{out, len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return process_vm_readv(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

std::string PythonRuntime::version() const { return version_text(layout.version_hex); }

std::string python_frames_unavailable(const Error& why) { return "Python frames unavailable: " + why.message; }

Result<PythonRuntime> find_python_runtime(pid_t pid) {
  ProcessMemory memory(pid);
  return find_python_runtime(pid, memory);
}

Result<PythonRuntime> find_python_runtime(pid_t pid, MemoryReader& memory) {
  auto maps = read_file_mappings(pid);
  if (!maps) return maps.error();
  static const std::regex kPython(R"(^(lib)?python\d)");
  auto py = find_symbols(pid, *maps, kPython, "_PyRuntime", {"_PyRuntime", "Py_Version", "PyCode_Type"});
  if (!py) return py.error();
  PythonRuntime rt;
  rt.path = py->path;
  rt.load_bias = py->bias;
  if (!py->addresses.count("PyCode_Type")) return Error::failure(fmt::format("{} does not export PyCode_Type", rt.path));
  uint32_t version_hex = 0;
  if (auto it = py->addresses.find("Py_Version"); it != py->addresses.end()) {
    uint64_t value = 0;  // const unsigned long Py_Version
    if (!memory.read_value(it->second, value)) return unreadable("Py_Version", it->second);
    version_hex = static_cast<uint32_t>(value);
  } else if (!version_from_name(rt.path, version_hex)) {
    return Error::failure(fmt::format("{} exports no Py_Version and its name gives no version", rt.path));
  } else if (minor_of(version_hex) >= 11) {
    return Error::failure(fmt::format("{} lacks Py_Version, which CPython {} has", rt.path, version_text(version_hex)));
  }
  const uint32_t minor = minor_of(version_hex);
  if (major_of(version_hex) != 3 || minor < 10 || minor > 13)
    return Error::failure(fmt::format("CPython {} is not supported (3.10 to 3.13 are)", version_text(version_hex)));

  const uint64_t runtime = py->addresses.at("_PyRuntime");
  ib_python_layout l{};
  if (minor == 10) {
    l = layout_310();
    // 3.10 names a thread only by pthread_self(): glibc says where its struct pthread keeps the
    // tid in the descriptor it exports for thread debuggers ({bits, count, offset}).
    static const std::regex kLibc(R"(^libc[.-])");
    auto libc = find_symbols(pid, *maps, kLibc, "_thread_db_pthread_tid", {"_thread_db_pthread_tid"});
    if (!libc) return Error::failure("CPython 3.10 needs glibc's _thread_db_pthread_tid: " + libc.error().message);
    uint32_t desc[3] = {};
    const uint64_t at = libc->addresses.at("_thread_db_pthread_tid");
    if (!memory.read_value(at, desc)) return unreadable("_thread_db_pthread_tid", at);
    if (desc[0] != 32) return Error::failure(fmt::format("glibc's pthread tid is {} bits, not 32", desc[0]));
    l.pthread_tid = desc[2];
  } else if (minor == 11) {
    l = layout_311();
  } else if (minor == 12) {
    l = layout_312();
  } else {
    auto l13 = layout_313(memory, runtime, version_hex);
    if (!l13) return l13.error();
    l = *l13;
  }
  l.version_hex = version_hex;
  l.runtime_addr = runtime;
  l.code_type_addr = py->addresses.at("PyCode_Type");
  struct stat ns {};
  if (stat(fmt::format("/proc/{}/ns/pid", pid).c_str(), &ns) == 0) {
    l.pidns_dev = ns.st_dev;
    l.pidns_ino = ns.st_ino;
  }
  rt.layout = l;
  return rt;
}

Result<uint64_t> find_thread_state(const ib_python_layout& l, MemoryReader& memory, pid_t tid) {
  uint64_t interp = 0, tstate = 0;
  if (!read_ptr(memory, l.runtime_addr + l.runtime_interp_head, interp)) return unreadable("_PyRuntime", l.runtime_addr);
  if (!interp) return uint64_t{0};  // not initialized yet, or finalized
  if (!read_ptr(memory, interp + l.interp_threads_head, tstate)) return unreadable("the interpreter state", interp);
  for (int i = 0; i < IB_PY_MAX_THREADS && tstate; ++i) {
    uint64_t id = 0;
    if (l.thread_match == IB_PY_MATCH_NATIVE_TID) {
      if (!read_ptr(memory, tstate + l.tstate_native_thread_id, id)) return unreadable("a thread state", tstate);
    } else {
      uint64_t pthread = 0;
      int32_t pthread_tid = 0;
      if (!read_ptr(memory, tstate + l.tstate_thread_id, pthread)) return unreadable("a thread state", tstate);
      if (pthread && memory.read_value(pthread + l.pthread_tid, pthread_tid)) id = static_cast<uint32_t>(pthread_tid);
    }
    if (id == static_cast<uint64_t>(tid)) return tstate;
    if (!read_ptr(memory, tstate + l.tstate_next, tstate)) return unreadable("a thread state", tstate);
  }
  return uint64_t{0};
}

Result<std::vector<ib_python_frame>> walk_python_stack(const ib_python_layout& l, MemoryReader& memory, pid_t tid) {
  auto tstate = find_thread_state(l, memory, tid);
  if (!tstate) return tstate.error();
  if (!*tstate) return Error::failure(fmt::format("thread {} has no Python thread state", tid));
  uint64_t frame = 0, holder = *tstate;
  if (l.tstate_cframe != IB_PY_NO_FIELD && !read_ptr(memory, *tstate + l.tstate_cframe, holder))
    return unreadable("a thread state", *tstate);
  if (holder && !read_ptr(memory, holder + l.cframe_current_frame, frame)) return unreadable("a _PyCFrame", holder);
  std::vector<ib_python_frame> out;
  for (int i = 0; i < IB_PY_MAX_WALK && frame && out.size() < IB_PY_MAX_FRAMES; ++i) {
    ib_python_frame f{};
    uint64_t previous = 0;
    if (!read_ptr(memory, frame + l.frame_previous, previous) || !read_ptr(memory, frame + l.frame_code, f.code))
      return unreadable("a frame", frame);
    uint8_t owner = 0;
    if (l.frame_owner != IB_PY_NO_FIELD && !memory.read_value(frame + l.frame_owner, owner))
      return unreadable("a frame", frame);
    if (l.owner_cstack == IB_PY_NO_FIELD || owner != l.owner_cstack) {
      uint64_t type = 0;
      if (!read_ptr(memory, f.code + l.object_type, type)) return unreadable("a code object", f.code);
      if (type != l.code_type_addr)
        return Error::failure(fmt::format("frame {:#x} holds {:#x}, whose type {:#x} is not PyCode_Type {:#x}", frame,
                                          f.code, type, l.code_type_addr));
      if (l.frame_instr_is_lasti) {
        int32_t lasti = 0;
        if (!memory.read_value(frame + l.frame_instr, lasti)) return unreadable("a frame", frame);
        f.instr = static_cast<uint64_t>(static_cast<int64_t>(lasti));
      } else if (!read_ptr(memory, frame + l.frame_instr, f.instr)) {
        return unreadable("a frame", frame);
      }
      out.push_back(f);
    }
    frame = previous;
  }
  return out;
}

Result<pid_t> thread_id_in_its_namespace(pid_t pid, pid_t tid) {
  const std::string path = fmt::format("/proc/{}/task/{}/status", pid, tid);
  std::ifstream in(path);
  if (!in) return Error::bad_input(fmt::format("no thread {} in process {} ({} is unreadable)", tid, pid, path));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("NSpid:", 0) != 0) continue;
    auto last = line.find_last_of(" \t");
    return static_cast<pid_t>(std::stol(line.substr(last + 1)));
  }
  return tid;  // a kernel without NSpid (before 4.1) has no pid namespaces to translate
}

Result<std::vector<ib_python_frame>> walk_python_stack(pid_t pid, pid_t tid) {
  ProcessMemory memory(pid);
  auto rt = find_python_runtime(pid, memory);
  if (!rt) return rt.error();
  auto ns_tid = thread_id_in_its_namespace(pid, tid);
  if (!ns_tid) return ns_tid.error();
  return walk_python_stack(rt->layout, memory, *ns_tid);
}

const char* line_kind_name(PythonLineKind kind) { return kind == PythonLineKind::executing ? "executing" : "first"; }

int line_from_linetable_310(const std::string& t, int firstlineno, uint64_t byte_offset) {
  // Pairs (bytes: unsigned, line delta: signed, -128 for no line), from co_firstlineno.
  int line = firstlineno;
  uint64_t start = 0;
  for (size_t i = 0; i + 1 < t.size(); i += 2) {
    const uint64_t end = start + static_cast<uint8_t>(t[i]);
    const int delta = static_cast<int8_t>(t[i + 1]);
    if (delta != -128) line += delta;
    if (byte_offset >= start && byte_offset < end) return delta == -128 ? -1 : line;
    start = end;
  }
  return -1;
}

int line_from_locations_311(const std::string& t, int firstlineno, uint64_t unit_offset) {
  // Entries open with a byte 1CCCCLLL: code C, L + 1 code units; codes 13 and 14 carry a signed
  // varint line delta, 10-12 a delta of C - 10, 15 no line, the rest the same line
  // (Objects/locations.md).
  int line = firstlineno;
  uint64_t start = 0;
  size_t i = 0;
  while (i < t.size()) {
    const uint8_t head = static_cast<uint8_t>(t[i++]);
    if (!(head & 0x80)) return -1;  // not at an entry: not a location table
    const uint32_t code = (head >> 3) & 15;
    const uint64_t end = start + (head & 7) + 1;
    if (code == 13 || code == 14) {
      line += read_signed_varint(t, i);
    } else if (code >= 10 && code <= 12) {
      line += static_cast<int>(code) - 10;
    }
    if (unit_offset >= start && unit_offset < end) return code == 15 ? -1 : line;
    while (i < t.size() && !(static_cast<uint8_t>(t[i]) & 0x80)) ++i;  // the columns
    start = end;
  }
  return -1;
}

Result<PythonCodeReader::Code> PythonCodeReader::read_code(const ib_python_layout& l, MemoryReader& memory,
                                                           uint64_t code) {
  uint64_t type = 0, name = 0, file = 0, table = 0;
  int32_t firstlineno = 0;
  if (!read_ptr(memory, code + l.object_type, type)) return unreadable("a code object", code);
  if (type != l.code_type_addr) return Error::failure(fmt::format("{:#x} is not a code object", code));
  if (!read_ptr(memory, code + l.code_name, name) || !read_ptr(memory, code + l.code_filename, file) ||
      !read_ptr(memory, code + l.code_linetable, table) || !memory.read_value(code + l.code_firstlineno, firstlineno))
    return unreadable("a code object", code);
  Code c;
  c.name_obj = name;
  c.firstlineno = firstlineno;
  auto qualname = read_str(l, memory, name);
  if (!qualname) return qualname.error();
  c.qualname = std::move(*qualname);
  auto filename = read_str(l, memory, file);
  if (!filename) return filename.error();
  c.file = std::move(*filename);
  auto linetable = read_bytes(l, memory, table);
  if (linetable) c.linetable = std::move(*linetable);  // without it, lines are first lines
  int64_t units = 0;
  if (l.code_adaptive != IB_PY_NO_FIELD && memory.read_value(code + l.var_size, units) && units > 0)
    c.code_units = static_cast<uint64_t>(units);
  return c;
}

Result<PythonFrameInfo> PythonCodeReader::resolve(pid_t pid, const ib_python_layout& l, MemoryReader& memory,
                                                  const ib_python_frame& frame) {
  const auto key = std::make_pair(pid, frame.code);
  auto it = codes_.find(key);
  // A freed code object's address may hold another one later: a cached one whose name object
  // has changed is read again. A process that has exited keeps what was cached.
  uint64_t name = 0;
  if (it != codes_.end() && read_ptr(memory, frame.code + l.code_name, name) && name != it->second.name_obj) {
    codes_.erase(it);
    it = codes_.end();
  }
  if (it == codes_.end()) {
    auto code = read_code(l, memory, frame.code);
    if (!code) return code.error();
    it = codes_.emplace(key, std::move(*code)).first;
  }
  const Code& c = it->second;
  PythonFrameInfo info{c.qualname, c.file, c.firstlineno, PythonLineKind::first};
  int line = -1;
  if (l.frame_instr_is_lasti) {
    const auto lasti = static_cast<int64_t>(frame.instr);  // in code units; -1 before the first
    if (lasti >= 0) line = line_from_linetable_310(c.linetable, c.firstlineno, static_cast<uint64_t>(lasti) * 2);
  } else {
    const uint64_t first = frame.code + l.code_adaptive;
    if (frame.instr >= first && (frame.instr - first) / 2 < c.code_units)
      line = line_from_locations_311(c.linetable, c.firstlineno, (frame.instr - first) / 2);
  }
  if (line > 0) {
    info.line = line;
    info.line_kind = PythonLineKind::executing;
  }
  return info;
}

Result<std::vector<PythonFrameInfo>> check_python_layout(pid_t pid, pid_t tid, const ib_python_layout& layout,
                                                         MemoryReader& memory) {
  auto ns_tid = thread_id_in_its_namespace(pid, tid);
  if (!ns_tid) return ns_tid.error();
  auto frames = walk_python_stack(layout, memory, *ns_tid);
  if (!frames) return frames.error();
  if (frames->empty()) return Error::failure(fmt::format("thread {} shows no Python frame to check the layout against", tid));
  PythonCodeReader reader;
  std::vector<PythonFrameInfo> out;
  for (const auto& f : *frames) {
    auto info = reader.resolve(pid, layout, memory, f);
    if (!info) return info.error();
    out.push_back(std::move(*info));
  }
  static const std::set<std::string> kEntries = {"<module>", "_run_module_as_main", "Thread._bootstrap",
                                                 "_bootstrap"};
  if (frames->size() < IB_PY_MAX_FRAMES && !kEntries.count(out.back().qualname))
    return Error::failure(fmt::format("thread {}'s outermost Python frame is {}, where a thread starts in <module>, "
                                      "_run_module_as_main or Thread._bootstrap",
                                      tid, out.back().qualname));
  return out;
}

}  // namespace ingero::tracer

// SPDX-License-Identifier: Apache-2.0
// The CPython layout, the user-space walk and the code reader against real interpreters: a script
// whose threads sit in known functions at known lines. Reading another process's memory needs root
// (these tests skip otherwise).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/unique_fd.h"
#include "tracer/cpython_layout.h"
#include "tracer/elf_symbols.h"
#include "tracer/hang_stacks.h"

namespace ingero::tracer {
namespace {

#define REQUIRE_ROOT() \
  if (geteuid() != 0) GTEST_SKIP() << "needs root to read another process's memory: run as root (sudo ctest)"

// The main thread spins in Inner.work (line BUSY); a worker thread sleeps in Inner.nap (line NAP).
// Each loop sits on one line, so every instruction of it gives that line.
constexpr const char* kScript = R"(import threading, time

class Inner:
    def work(self):
        n = 0
        while True: n += 1  # BUSY

    def nap(self, started):
        started.set()
        while True: time.sleep(0.01)  # NAP

def outer():
    Inner().work()  # OUTER

def worker(started):
    Inner().nap(started)  # WORKER

def start():
    started = threading.Event()
    t = threading.Thread(target=worker, args=(started,), name="walked")
    t.start()
    started.wait()
    print("ready", t.native_id, flush=True)
    outer()  # START

start()  # MODULE
)";

int line_of(const std::string& marker) {
  const std::string text = kScript;
  const auto at = text.find("# " + marker + "\n");
  int line = 1;
  for (size_t i = 0; i < at; ++i) line += text[i] == '\n';
  return line;
}

// A child process, killed and reaped when it goes.
struct Child {
  pid_t pid = -1;
  UniqueFd out;
  ~Child() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  // The first line the child prints, waiting at most 20 s.
  std::optional<std::string> read_line() {
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      char c;
      ssize_t n = ::read(out.get(), &c, 1);
      if (n == 1) {
        if (c == '\n') return line;
        line += c;
      } else if (n == 0) {
        return std::nullopt;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    return std::nullopt;
  }
};

std::unique_ptr<Child> spawn(const std::vector<std::string>& argv) {
  auto pipe = make_pipe(O_CLOEXEC);
  if (!pipe) return nullptr;
  auto child = std::make_unique<Child>();
  child->pid = fork();
  if (child->pid == 0) {
    dup2(pipe->write.get(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  fcntl(pipe->read.get(), F_SETFL, O_NONBLOCK);
  child->out = std::move(pipe->read);
  return child;
}

struct ScriptFile {
  std::string path;
  ScriptFile() {
    char tmpl[] = "/tmp/ingero-pystack-XXXXXX";
    path = std::string(mkdtemp(tmpl)) + "/walked_script.py";
    std::ofstream(path) << kScript;
  }
  ~ScriptFile() {
    std::remove(path.c_str());
    rmdir(path.substr(0, path.rfind('/')).c_str());
  }
};

// Interpreters to try: Debian's 3.11 (skipped where absent), the distribution's other 3.10-3.13
// (Ubuntu 24.04's 3.12), and those pyenv has (3.10, 3.12 and 3.13 on the CPU machine).
std::vector<std::string> interpreters() {
  std::vector<std::string> out = {"/usr/bin/python3.11"};
  const char* root = std::getenv("PYENV_ROOT");
  const std::string pyenv = std::string(root ? root : "/root/.pyenv") + "/versions/3.1[0-3].*/bin/python3.1[0-3]";
  for (const std::string& pattern : {std::string("/usr/bin/python3.1[0-3]"), pyenv}) {
    glob_t g{};
    if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i)
        if (std::find(out.begin(), out.end(), g.gl_pathv[i]) == out.end()) out.emplace_back(g.gl_pathv[i]);
    globfree(&g);
  }
  return out;
}

std::string interpreter_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(info.param.rfind('/') + 1);
  for (auto& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n + "_" + std::to_string(info.index);
}

class CpythonWalk : public ::testing::TestWithParam<std::string> {};

// Walks `tid` until its innermost frame is `innermost` (the script may still be on its way there).
std::vector<PythonFrameInfo> walk_until(pid_t pid, pid_t tid, const ib_python_layout& layout,
                                        const std::string& innermost, std::string& why) {
  ProcessMemory memory(pid);
  for (int attempt = 0; attempt < 200; ++attempt) {
    auto frames = check_python_layout(pid, tid, layout, memory);
    if (frames && !frames->empty() && frames->front().qualname == innermost) return *frames;
    why = frames ? "innermost " + (frames->empty() ? std::string("none") : frames->front().qualname)
                 : frames.error().message;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return {};
}

TEST_P(CpythonWalk, FindsNamesFilesAndExecutingLinesOfBothThreads) {
  REQUIRE_ROOT();
  const std::string python = GetParam();
  if (access(python.c_str(), X_OK) != 0) GTEST_SKIP() << python << " is not installed";
  ScriptFile script;
  auto child = spawn({python, "-u", script.path});
  ASSERT_TRUE(child);
  auto ready = child->read_line();
  ASSERT_TRUE(ready && ready->rfind("ready ", 0) == 0) << python << " did not start the script";
  const pid_t worker_tid = std::stoi(ready->substr(6));

  auto rt = find_python_runtime(child->pid);
  ASSERT_TRUE(rt) << rt.error().message;
  if (rt->path.find("libpython") != std::string::npos) {
    EXPECT_NE(rt->load_bias, 0u) << rt->path;
  }
  const bool qualnames = rt->layout.version_hex >= 0x030b0000;  // 3.10 has co_name only
  const auto name = [&](const std::string& qual) { return qualnames ? qual : qual.substr(qual.rfind('.') + 1); };

  std::string why;
  auto main_frames = walk_until(child->pid, child->pid, rt->layout, name("Inner.work"), why);
  ASSERT_EQ(main_frames.size(), 4u) << python << " " << rt->version() << ": " << why;
  const std::vector<std::pair<std::string, std::string>> expected = {
      {name("Inner.work"), "BUSY"}, {"outer", "OUTER"}, {"start", "START"}, {"<module>", "MODULE"}};
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(python + " main frame " + std::to_string(i));
    EXPECT_EQ(main_frames[i].qualname, expected[i].first);
    EXPECT_EQ(main_frames[i].file, script.path);
    EXPECT_EQ(main_frames[i].line, line_of(expected[i].second));
    EXPECT_EQ(main_frames[i].line_kind, PythonLineKind::executing);
  }

  auto worker_frames = walk_until(child->pid, worker_tid, rt->layout, name("Inner.nap"), why);
  ASSERT_GE(worker_frames.size(), 3u) << python << ": " << why;
  EXPECT_EQ(worker_frames[0].line, line_of("NAP"));
  EXPECT_EQ(worker_frames[0].line_kind, PythonLineKind::executing);
  EXPECT_EQ(worker_frames[1].qualname, "worker");
  EXPECT_EQ(worker_frames[1].line, line_of("WORKER"));
  EXPECT_EQ(worker_frames.back().qualname, name("Thread._bootstrap"));
  EXPECT_NE(worker_frames.back().file.find("threading.py"), std::string::npos) << worker_frames.back().file;
}

INSTANTIATE_TEST_SUITE_P(Interpreters, CpythonWalk, ::testing::ValuesIn(interpreters()), interpreter_name);

TEST(CpythonLayout, DebianPython311HasItsLayout) {
  REQUIRE_ROOT();
  if (access("/usr/bin/python3.11", X_OK) != 0) GTEST_SKIP() << "/usr/bin/python3.11 is not installed";
  ScriptFile script;
  auto child = spawn({"/usr/bin/python3.11", "-u", script.path});
  ASSERT_TRUE(child && child->read_line());
  auto rt = find_python_runtime(child->pid);
  ASSERT_TRUE(rt) << rt.error().message;
  EXPECT_EQ(rt->path, "/usr/bin/python3.11");  // Debian links libpython into the binary
  EXPECT_EQ(rt->layout.version_hex >> 16, 0x030bu);
  EXPECT_EQ(rt->layout.tstate_cframe, 56u);
  EXPECT_NE(rt->layout.runtime_addr, 0u);
  // The load bias is applied: _PyRuntime's address lies in the process, not at its link-time value.
  auto elf = symbol_addresses("/usr/bin/python3.11", {"_PyRuntime"});
  ASSERT_TRUE(elf);
  EXPECT_EQ(rt->layout.runtime_addr, elf->addresses.at("_PyRuntime") + rt->load_bias);
  // Debian builds it as a fixed-address executable (bias 0); the libpython of other builds is
  // relocated, which the walks of those interpreters check.
  // A thread of the process that never ran Python has no thread state, and says so.
  ProcessMemory memory(child->pid);
  auto none = walk_python_stack(rt->layout, memory, 999999);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("has no Python thread state"), std::string::npos) << none.error().message;
}

// A hung job's stacks as the tracer reads them (tracer/hang_stacks.h): every Python thread, its
// innermost frame first, with the executing line.
TEST(HangStacks, EveryPythonThreadOfAProcessIsReadWithItsLine) {
  REQUIRE_ROOT();
  if (access("/usr/bin/python3.11", X_OK) != 0) GTEST_SKIP() << "/usr/bin/python3.11 is not installed";
  ScriptFile script;
  auto child = spawn({"/usr/bin/python3.11", "-u", script.path});
  ASSERT_TRUE(child && child->read_line());
  auto stacks = read_python_stacks(child->pid);
  ASSERT_TRUE(stacks) << stacks.error().message;
  ASSERT_EQ(stacks->size(), 2u);
  std::map<std::string, PythonFrameInfo> innermost;
  for (const ThreadPythonStack& s : *stacks) innermost[s.frames.front().qualname] = s.frames.front();
  ASSERT_TRUE(innermost.count("Inner.nap") && innermost.count("Inner.work"));
  EXPECT_EQ(innermost["Inner.nap"].line, line_of("NAP"));
  EXPECT_EQ(innermost["Inner.nap"].file, script.path);
  EXPECT_EQ(innermost["Inner.work"].line, line_of("BUSY"));
}

// Two stacks that share their callers share the profile's frames and nodes; the id is the innermost's.
TEST(HangStacks, StacksAreInternedIntoTheProfile) {
  CpuProfile profile;
  auto frame = [](const char* name, int line) { return PythonFrameInfo{name, "/job/train.py", line, PythonLineKind::executing}; };
  const int64_t a = add_python_stack(profile, {frame("wait", 9), frame("loop", 5), frame("<module>", 1)});
  const int64_t b = add_python_stack(profile, {frame("fetch", 12), frame("loop", 5), frame("<module>", 1)});
  EXPECT_EQ(profile.frames.size(), 4u);
  EXPECT_EQ(profile.stacks.size(), 4u);
  EXPECT_NE(a, b);
  EXPECT_EQ(profile.stacks[a - 1].parent_id, profile.stacks[b - 1].parent_id);
  EXPECT_EQ(profile.frames[profile.stacks[a - 1].frame_id - 1].name, "wait");
  EXPECT_EQ(add_python_stack(profile, {frame("wait", 9), frame("loop", 5), frame("<module>", 1)}), a);
}

TEST(CpythonLayout, NonPythonProcessSaysWhy) {
  REQUIRE_ROOT();
  auto child = spawn({"/bin/sleep", "30"});
  ASSERT_TRUE(child);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // past exec
  auto rt = find_python_runtime(child->pid);
  ASSERT_FALSE(rt);
  EXPECT_EQ(python_frames_unavailable(rt.error()),
            "Python frames unavailable: process " + std::to_string(child->pid) + " maps no python binary or libpython");
  auto frames = walk_python_stack(child->pid, child->pid);
  EXPECT_FALSE(frames);
}

struct BpfObjectCloser {
  void operator()(bpf_object* obj) const { bpf_object__close(obj); }
};
struct BpfLinkCloser {
  void operator()(bpf_link* link) const { bpf_link__destroy(link); }
};

class CpythonKernelWalk : public ::testing::TestWithParam<std::string> {};

// bpf/python_stack.bpf.h in a perf_event program on the busy main thread: the verifier passes it, and
// the frames it reads in the kernel are the user-space walk's, down to the code objects.
// The pid of the python that `unshare --fork` started in its own pid namespace.
pid_t forked_child_of(pid_t parent) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream in("/proc/" + std::to_string(parent) + "/task/" + std::to_string(parent) + "/children");
    pid_t pid = 0;
    if (in >> pid) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

const char* check_object() {
  const char* object = INGERO_PYTHON_STACK_CHECK;
  return object[0] && access(object, R_OK) == 0 ? object : nullptr;
}

void kernel_walk_matches_user_walk(const std::string& python, bool in_pid_namespace) {
  ScriptFile script;
  auto child = in_pid_namespace ? spawn({"/usr/bin/unshare", "--pid", "--fork", "--kill-child", "--mount-proc", python, "-u", script.path})
                                : spawn({python, "-u", script.path});
  ASSERT_TRUE(child);
  ASSERT_TRUE(child->read_line());
  const pid_t pid = in_pid_namespace ? forked_child_of(child->pid) : child->pid;
  ASSERT_GT(pid, 0);
  auto rt = find_python_runtime(pid);
  ASSERT_TRUE(rt) << rt.error().message;
  const bool qualnames = rt->layout.version_hex >= 0x030b0000;
  std::string why;
  auto user = walk_until(pid, pid, rt->layout, qualnames ? "Inner.work" : "work", why);
  ASSERT_EQ(user.size(), 4u) << why;
  ProcessMemory memory(pid);
  auto ns_tid = thread_id_in_its_namespace(pid, pid);
  ASSERT_TRUE(ns_tid);
  EXPECT_EQ(*ns_tid == pid, !in_pid_namespace);
  auto user_frames = walk_python_stack(rt->layout, memory, *ns_tid);
  ASSERT_TRUE(user_frames) << user_frames.error().message;
  const char* object = check_object();

  std::unique_ptr<bpf_object, BpfObjectCloser> obj(bpf_object__open_file(object, nullptr));
  ASSERT_TRUE(obj) << "cannot open " << object;
  ASSERT_EQ(bpf_object__load(obj.get()), 0) << "the verifier rejected python_stack.bpf.h's walk";
  const int layouts = bpf_map__fd(bpf_object__find_map_by_name(obj.get(), "python_layouts"));
  const int samples = bpf_map__fd(bpf_object__find_map_by_name(obj.get(), "python_stack_samples"));
  ASSERT_GE(layouts, 0);
  ASSERT_GE(samples, 0);
  const __u32 tgid = static_cast<__u32>(pid);
  ASSERT_EQ(bpf_map_update_elem(layouts, &tgid, &rt->layout, BPF_ANY), 0);

  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 1000000;  // 1 ms of the thread's CPU time
  UniqueFd event(static_cast<int>(syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC)));
  ASSERT_TRUE(event) << "perf_event_open: " << strerror(errno);
  bpf_program* prog = bpf_object__find_program_by_name(obj.get(), "python_stack_check");
  ASSERT_TRUE(prog);
  std::unique_ptr<bpf_link, BpfLinkCloser> link(bpf_program__attach_perf_event(prog, event.get()));
  ASSERT_TRUE(link) << "attach: " << strerror(errno);

  struct {
    __s32 count;
    __u32 pad;
    ib_python_frame frames[IB_PY_MAX_FRAMES];
  } sample{};
  const __u32 tid = static_cast<__u32>(pid);  // the kernel's numbering keys the samples
  bool seen = false;
  for (int i = 0; i < 200 && !seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen = bpf_map_lookup_elem(samples, &tid, &sample) == 0;
  }
  ASSERT_TRUE(seen) << "no sample of the busy thread";
  ASSERT_EQ(sample.count, static_cast<int>(user_frames->size())) << "a negative count is an enum ib_py_error";
  PythonCodeReader reader;
  for (int i = 0; i < sample.count; ++i) {
    EXPECT_EQ(sample.frames[i].code, (*user_frames)[i].code) << "frame " << i;
    auto info = reader.resolve(pid, rt->layout, memory, sample.frames[i]);
    ASSERT_TRUE(info) << info.error().message;
    EXPECT_EQ(info->qualname, user[i].qualname);
    EXPECT_EQ(info->line, user[i].line) << "frame " << i;
  }
}

TEST_P(CpythonKernelWalk, KernelFramesMatchTheUserSpaceWalk) {
  REQUIRE_ROOT();
  if (!check_object()) GTEST_SKIP() << "no BPF check object (prebuilt skeletons)";
  if (access(GetParam().c_str(), X_OK) != 0) GTEST_SKIP() << GetParam() << " is not installed";
  kernel_walk_matches_user_walk(GetParam(), false);
}

INSTANTIATE_TEST_SUITE_P(Interpreters, CpythonKernelWalk, ::testing::ValuesIn(interpreters()), interpreter_name);

// A process in its own pid namespace (a container's) stores thread ids that are not the kernel's:
// both walks translate.
TEST(CpythonKernelWalkNamespaced, KernelFramesMatchTheUserSpaceWalkInAPidNamespace) {
  REQUIRE_ROOT();
  if (!check_object()) GTEST_SKIP() << "no BPF check object (prebuilt skeletons)";
  if (access("/usr/bin/python3.11", X_OK) != 0 || access("/usr/bin/unshare", X_OK) != 0)
    GTEST_SKIP() << "needs /usr/bin/python3.11 and /usr/bin/unshare";
  kernel_walk_matches_user_walk("/usr/bin/python3.11", true);
}

// A binary named python that does not export CPython's symbols (as a static or stripped build would
// not): here sleep under the name python3.11.
TEST(CpythonLayout, PythonWithoutSymbolsSaysWhy) {
  REQUIRE_ROOT();
  char tmpl[] = "/tmp/ingero-pystrip-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string fake = dir + "/python3.11";
  {
    std::ifstream in("/bin/sleep", std::ios::binary);
    std::ofstream out(fake, std::ios::binary);
    out << in.rdbuf();
  }
  chmod(fake.c_str(), 0755);
  auto child = spawn({fake, "30"});
  ASSERT_TRUE(child);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // past exec
  auto rt = find_python_runtime(child->pid);
  std::remove(fake.c_str());
  rmdir(dir.c_str());
  ASSERT_FALSE(rt);
  EXPECT_EQ(python_frames_unavailable(rt.error()),
            "Python frames unavailable: " + fake + " does not export _PyRuntime (a static or stripped build)");
}

// Reads the process, but gives Py_Version as another number.
class VersionTamper : public MemoryReader {
 public:
  VersionTamper(pid_t pid, uint64_t version_addr, uint64_t version) : real_(pid), at_(version_addr), version_(version) {}
  bool read(uint64_t addr, void* out, size_t len) override {
    if (addr == at_ && len == sizeof(version_)) {
      std::memcpy(out, &version_, len);
      return true;
    }
    return real_.read(addr, out, len);
  }

 private:
  ProcessMemory real_;
  uint64_t at_;
  uint64_t version_;
};

TEST(CpythonLayout, UnsupportedVersionsSayWhy) {
  REQUIRE_ROOT();
  if (access("/usr/bin/python3.11", X_OK) != 0) GTEST_SKIP() << "/usr/bin/python3.11 is not installed";
  ScriptFile script;
  auto child = spawn({"/usr/bin/python3.11", "-u", script.path});
  ASSERT_TRUE(child && child->read_line());
  auto rt = find_python_runtime(child->pid);
  ASSERT_TRUE(rt) << rt.error().message;
  auto elf = symbol_addresses("/usr/bin/python3.11", {"Py_Version"});
  ASSERT_TRUE(elf && elf->addresses.count("Py_Version"));
  const uint64_t at = elf->addresses.at("Py_Version") + rt->load_bias;
  for (const auto& [version, text] : {std::pair<uint64_t, std::string>{0x030e00f0, "3.14.0"}, {0x030912f0, "3.9.18"}}) {
    VersionTamper memory(child->pid, at, version);
    auto tampered = find_python_runtime(child->pid, memory);
    ASSERT_FALSE(tampered) << text;
    EXPECT_EQ(python_frames_unavailable(tampered.error()),
              "Python frames unavailable: CPython " + text + " is not supported (3.10 to 3.13 are)");
  }
}

TEST(CpythonLayout, Python39SaysWhy) {
  REQUIRE_ROOT();
  const char* root = std::getenv("PYENV_ROOT");
  const std::string pattern = std::string(root ? root : "/root/.pyenv") + "/versions/3.9.*/bin/python3.9";
  glob_t g{};
  std::string python;
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0 && g.gl_pathc) python = g.gl_pathv[0];
  globfree(&g);
  if (python.empty()) GTEST_SKIP() << "no python3.9 here (" << pattern << ")";
  ScriptFile script;
  auto child = spawn({python, "-u", script.path});
  ASSERT_TRUE(child && child->read_line());
  auto rt = find_python_runtime(child->pid);
  ASSERT_FALSE(rt);
  EXPECT_EQ(rt.error().message.rfind("CPython 3.9 is not supported", 0), 0u) << rt.error().message;
}

// Memory made of byte strings at addresses, for code objects built by hand.
class FakeMemory : public MemoryReader {
 public:
  bool read(uint64_t addr, void* out, size_t len) override {
    auto it = regions_.upper_bound(addr);
    if (it == regions_.begin()) return false;
    --it;
    if (addr + len > it->first + it->second.size()) return false;
    std::memcpy(out, it->second.data() + (addr - it->first), len);
    return true;
  }
  void put(uint64_t addr, std::string bytes) { regions_[addr] = std::move(bytes); }
  template <class T>
  static void set(std::string& bytes, size_t at, T value) {
    std::memcpy(bytes.data() + at, &value, sizeof(value));
  }

 private:
  std::map<uint64_t, std::string> regions_;
};

// 3.12's offsets, as find_python_runtime gives them.
ib_python_layout fake_layout() {
  ib_python_layout l{};
  l.version_hex = 0x030c01f0;
  l.code_type_addr = 0x9000;
  l.object_type = 8;
  l.var_size = 16;
  l.bytes_data = 32;
  l.str_length = 16;
  l.str_state = 32;
  l.str_ascii_data = 40;
  l.str_compact_data = 56;
  l.code_name = 128;
  l.code_filename = 112;
  l.code_firstlineno = 68;
  l.code_linetable = 136;
  l.code_adaptive = 192;
  return l;
}

// A compact str of `kind` bytes per code point.
std::string fake_str(const std::u32string& text, uint32_t kind) {
  const bool ascii = kind == 1 && std::all_of(text.begin(), text.end(), [](char32_t c) { return c < 128; });
  std::string bytes((ascii ? 40 : 56) + text.size() * kind, '\0');
  FakeMemory::set<int64_t>(bytes, 16, static_cast<int64_t>(text.size()));
  FakeMemory::set<uint32_t>(bytes, 32, kind << 2 | 1u << 5 | (ascii ? 1u << 6 : 0));
  for (size_t i = 0; i < text.size(); ++i) std::memcpy(bytes.data() + (ascii ? 40 : 56) + i * kind, &text[i], kind);
  return bytes;
}

// A code object at `at` named by the str at `name`, in the file at `file`, first line 7, no line table.
std::string fake_code(uint64_t name, uint64_t file) {
  std::string code(200, '\0');
  FakeMemory::set<uint64_t>(code, 8, 0x9000);
  FakeMemory::set<uint64_t>(code, 128, name);
  FakeMemory::set<uint64_t>(code, 112, file);
  FakeMemory::set<int32_t>(code, 68, 7);
  return code;
}

TEST(CpythonCodeReader, DecodesEveryStrKindToUtf8) {
  FakeMemory memory;
  memory.put(0x1000, fake_str(U"Gr\u00f6\u00dfe.run", 1));         // latin-1
  memory.put(0x2000, fake_str(U"/data/\u540d\u524d.py", 2));        // UCS-2
  memory.put(0x3000, fake_str(U"f\U00020000", 4));                  // UCS-4
  memory.put(0x4000, fake_str(U"plain.py", 1));                     // ASCII
  memory.put(0x5000, fake_code(0x1000, 0x2000));
  memory.put(0x6000, fake_code(0x3000, 0x4000));
  PythonCodeReader reader;
  auto a = reader.resolve(1, fake_layout(), memory, {0x5000, 0});
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->qualname, "Gr\xc3\xb6\xc3\x9f" "e.run");
  EXPECT_EQ(a->file, "/data/\xe5\x90\x8d\xe5\x89\x8d.py");
  EXPECT_EQ(a->line, 7);
  EXPECT_EQ(a->line_kind, PythonLineKind::first);  // no instruction: the first line, said so
  auto b = reader.resolve(1, fake_layout(), memory, {0x6000, 0});
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->qualname, "f\xf0\xa0\x80\x80");
  EXPECT_EQ(b->file, "plain.py");
  // Not a code object: an error, never a name.
  memory.put(0x7000, std::string(200, '\0'));
  EXPECT_FALSE(reader.resolve(1, fake_layout(), memory, {0x7000, 0}));
}

TEST(CpythonCodeReader, ACodeObjectReplacedAtTheSameAddressIsReadAgain) {
  FakeMemory memory;
  memory.put(0x1000, fake_str(U"first", 1));
  memory.put(0x2000, fake_str(U"second", 1));
  memory.put(0x3000, fake_str(U"f.py", 1));
  memory.put(0x5000, fake_code(0x1000, 0x3000));
  PythonCodeReader reader;
  auto a = reader.resolve(1, fake_layout(), memory, {0x5000, 0});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->qualname, "first");
  memory.put(0x5000, fake_code(0x2000, 0x3000));  // freed, and another code object took the address
  auto b = reader.resolve(1, fake_layout(), memory, {0x5000, 0});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->qualname, "second");
  EXPECT_EQ(reader.cached(), 1u);
}

// The line tables' formats, on tables CPython made: 3.10's (bytes, line delta) pairs and 3.11's
// location entries.
TEST(CpythonLineTables, ParseBothFormats) {
  // 3.10: 6 bytes at firstlineno+1, 4 bytes with no line, 2 bytes two lines up.
  const std::string t310 = {6, 1, 4, static_cast<char>(-128), 2, -2};
  EXPECT_EQ(line_from_linetable_310(t310, 10, 0), 11);
  EXPECT_EQ(line_from_linetable_310(t310, 10, 5), 11);
  EXPECT_EQ(line_from_linetable_310(t310, 10, 6), -1);
  EXPECT_EQ(line_from_linetable_310(t310, 10, 10), 9);
  EXPECT_EQ(line_from_linetable_310(t310, 10, 12), -1);
  // 3.11+: a one-line entry (code 11: +1) of 2 units with 2 column bytes; a no-column entry
  // (code 13) of 1 unit, delta -1 as signed varint 3; a short entry (code 0) of 3 units; a long
  // entry (code 14) of 1 unit, delta +70 as varint 140 = 0x4c | 0x40, 0x02, then 3 varints; no line.
  const std::string t311 = {static_cast<char>(0x80 | 11 << 3 | 1), 4, 9,
                            static_cast<char>(0x80 | 13 << 3 | 0), 3,
                            static_cast<char>(0x80 | 0 << 3 | 2), 5,
                            static_cast<char>(0x80 | 14 << 3 | 0), 0x4c | 0x40, 0x02, 0, 1, 2,
                            static_cast<char>(0x80 | 15 << 3 | 0)};
  EXPECT_EQ(line_from_locations_311(t311, 20, 0), 21);
  EXPECT_EQ(line_from_locations_311(t311, 20, 1), 21);
  EXPECT_EQ(line_from_locations_311(t311, 20, 2), 20);
  EXPECT_EQ(line_from_locations_311(t311, 20, 5), 20);
  EXPECT_EQ(line_from_locations_311(t311, 20, 6), 90);
  EXPECT_EQ(line_from_locations_311(t311, 20, 7), -1);
  EXPECT_EQ(line_from_locations_311(t311, 20, 8), -1);
}

}  // namespace
}  // namespace ingero::tracer

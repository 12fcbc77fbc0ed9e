// SPDX-License-Identifier: Apache-2.0
// The CPU profile's aggregation and symbols without the kernel: samples made up from this test
// program's own functions, resolved through its own /proc/self/maps and symbol table.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "tracer/native_symbols.h"
#include "tracer/profile_aggregator.h"
#include "tracer/profile_sampler.h"

// Functions of this program that the made-up stacks name.
extern "C" __attribute__((noinline, used)) int ingero_profile_test_leaf(int x) { return x * 3 + 1; }
extern "C" __attribute__((noinline, used)) int ingero_profile_test_root(int x) { return ingero_profile_test_leaf(x) + 2; }
// Stands in for CPython's evaluation function.
extern "C" __attribute__((noinline, used)) int _PyEval_EvalFrameDefault(int x) { return ingero_profile_test_leaf(x) + 5; }

namespace ingero::tracer {
namespace {

uint64_t address_of(int (*f)(int)) { return reinterpret_cast<uint64_t>(f); }

ib_profile_sample sample_at(uint64_t ts_ns, std::initializer_list<uint64_t> user) {
  ib_profile_sample s{};
  s.ts_ns = ts_ns;
  s.pid = static_cast<uint32_t>(getpid());
  s.tid = s.pid + 1;
  int i = 0;
  for (uint64_t ip : user) s.ustack[i++] = ip;
  s.ustack_bytes = i * 8;
  return s;
}

// The stack of a sample, outermost first, as "kind:name".
std::vector<std::string> frames_of(const CpuProfile& p, int64_t stack_id) {
  std::vector<std::string> names;
  for (std::optional<int64_t> id = stack_id; id;) {
    const ProfileStack& st = p.stacks.at(static_cast<size_t>(*id - 1));
    const ProfileFrame& f = p.frames.at(static_cast<size_t>(st.frame_id - 1));
    names.insert(names.begin(), f.kind + ":" + f.name);
    id = st.parent_id;
  }
  return names;
}

PythonFrameDecoder fake_python() {
  return [](pid_t, uint64_t code, uint64_t instr) -> std::optional<DecodedPythonFrame> {
    if (code == 0) return std::nullopt;
    return DecodedPythonFrame{"f" + std::to_string(code), "job.py", static_cast<int64_t>(instr), kLineExecuting};
  };
}

TEST(ProfileAggregator, SymbolizesThisProgramsFunctionsAndCutsTheWalkOutsideItsCode) {
  ProfileAggregator agg(100);
  const uint64_t leaf = address_of(ingero_profile_test_leaf) + 1;
  const uint64_t caller = address_of(ingero_profile_test_root) + 5;  // a return address
  agg.add(sample_at(1050, {leaf, caller, 0x10 /* a register's value read as a frame */, caller}));
  agg.add(sample_at(1099, {leaf, caller, 0x10}));
  agg.add(sample_at(1100, {leaf, caller}));
  SymbolCache symbols;
  const CpuProfile p = agg.finish(KernelSymbols{}, symbols);
  ASSERT_EQ(p.samples.size(), 2u);  // buckets 1000 and 1100
  EXPECT_EQ(p.samples[0].bucket_ns, 1000u);
  EXPECT_EQ(p.samples[0].samples, 2u);
  EXPECT_EQ(p.samples[1].bucket_ns, 1100u);
  EXPECT_EQ(p.samples[0].stack_id, p.samples[1].stack_id);
  EXPECT_EQ(frames_of(p, p.samples[0].stack_id),
            (std::vector<std::string>{"native:ingero_profile_test_root", "native:ingero_profile_test_leaf"}));
  const ProfileFrame& f = p.frames.at(static_cast<size_t>(p.stacks.at(static_cast<size_t>(p.samples[0].stack_id - 1)).frame_id - 1));
  char self[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
  EXPECT_EQ(f.file, std::string(self));
  EXPECT_EQ(p.total_samples(), 3u);
}

TEST(ProfileAggregator, PythonFramesTakeTheEvaluationFunctionsPlace) {
  ProfileAggregator agg(1'000'000);
  agg.set_python_decoder(fake_python());
  ib_profile_sample s = sample_at(5, {address_of(ingero_profile_test_leaf) + 1,
                                      address_of(_PyEval_EvalFrameDefault) + 5,
                                      address_of(ingero_profile_test_root) + 5});
  s.py_count = 3;
  s.py[0] = {2, 20};  // innermost
  s.py[1] = {0, 0};   // undecodable: left out
  s.py[2] = {1, 10};
  agg.add(s);
  SymbolCache symbols;
  const CpuProfile p = agg.finish(KernelSymbols{}, symbols);
  ASSERT_EQ(p.samples.size(), 1u);
  EXPECT_EQ(frames_of(p, p.samples[0].stack_id),
            (std::vector<std::string>{"native:ingero_profile_test_root", "python:f1", "python:f2",
                                      "native:ingero_profile_test_leaf"}));
  bool lines = false;
  for (const ProfileFrame& f : p.frames)
    if (f.name == "f2") lines = f.line == 20 && f.file == "job.py" && f.line_kind == std::string(kLineExecuting);
  EXPECT_TRUE(lines);
}

TEST(ProfileAggregator, PythonFramesAreOutermostWhereTheNativeWalkStopsEarly) {
  ProfileAggregator agg(1'000'000);
  agg.set_python_decoder(fake_python());
  ib_profile_sample s = sample_at(5, {address_of(ingero_profile_test_leaf) + 1});
  s.py_count = 2;
  s.py[0] = {2, 20};
  s.py[1] = {1, 10};
  agg.add(s);
  SymbolCache symbols;
  const CpuProfile p = agg.finish(KernelSymbols{}, symbols);
  ASSERT_EQ(p.samples.size(), 1u);
  EXPECT_EQ(frames_of(p, p.samples[0].stack_id),
            (std::vector<std::string>{"python:f1", "python:f2", "native:ingero_profile_test_leaf"}));
}

TEST(ProfileAggregator, AnExitedProcessKeepsItsLastMappings) {
  int reads = 0;
  const std::string maps = "400000-500000 r-xp 00001000 08:01 77 /bin/gone\n";
  ProfileAggregator agg(100, [&](pid_t) -> std::optional<std::string> {
    if (reads++ == 0) return maps;
    return std::nullopt;
  });
  agg.add(sample_at(1, {0x400010}));
  // An address no mapping covers, later: the maps are read again, and the process is gone.
  agg.add(sample_at(200'000'000, {0x400020, 0x900000}));
  SymbolCache symbols;
  const CpuProfile p = agg.finish(KernelSymbols{}, symbols);
  ASSERT_EQ(p.frames.size(), 2u);
  EXPECT_EQ(p.frames[0].name, "0x1010");
  EXPECT_EQ(p.frames[1].name, "0x1020");  // no file to read: the offset in it
  EXPECT_EQ(p.frames[0].file, "/bin/gone");
  EXPECT_EQ(reads, 2);
}

TEST(ProfileAggregator, ParsesMapsAndCpuLists) {
  const auto m = parse_executable_mappings(
      "7f00-7f10 r--p 0 08:01 5 /lib/a.so\n7f10-7f20 r-xp 00010 08:01 5 /lib/a.so\n7f30-7f40 r-xp 0 00:00 0 [vdso]\n");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].path, "/lib/a.so");
  EXPECT_EQ(m[0].offset, 0x10u);
  EXPECT_EQ(m[0].inode, 5u);
  EXPECT_EQ(m[1].path, "");
  EXPECT_EQ(mapping_of(m, 0x7f15), &m[0]);
  EXPECT_EQ(mapping_of(m, 0x7f25), nullptr);
  EXPECT_EQ(parse_cpu_list("0-2,5\n"), (std::vector<int>{0, 1, 2, 5}));
  EXPECT_EQ(demangle("_ZN3foo3barEv"), "foo::bar()");
}

}  // namespace
}  // namespace ingero::tracer

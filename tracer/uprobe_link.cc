// SPDX-License-Identifier: Apache-2.0
#include "tracer/uprobe_link.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <mutex>

#include <fmt/format.h>

#include "common/clock.h"
#include "tracer/probe_calibration.h"

namespace ingero::tracer {

namespace {

// From the kernel's uapi (Linux 6.6+), which the build machine's headers may predate.
constexpr int kTraceUprobeMulti = 48;         // enum bpf_attach_type BPF_TRACE_UPROBE_MULTI
constexpr uint32_t kUprobeMultiReturn = 1u;   // BPF_F_UPROBE_MULTI_RETURN

// union bpf_attr's link_create as BPF_TRACE_UPROBE_MULTI reads it.
struct UprobeMultiAttr {
  uint32_t prog_fd;
  uint32_t target_fd;
  uint32_t attach_type;
  uint32_t flags;
  uint64_t path;
  uint64_t offsets;
  uint64_t ref_ctr_offsets;
  uint64_t cookies;
  uint32_t cnt;
  uint32_t multi_flags;
  uint32_t pid;
  uint32_t pad;
};

uint64_t address_of(const void* p) { return reinterpret_cast<uint64_t>(p); }

int create_multi_link(int prog_fd, const UprobeSpec& spec) {
  UprobeMultiAttr attr{};
  attr.prog_fd = static_cast<uint32_t>(prog_fd);
  attr.attach_type = kTraceUprobeMulti;
  attr.path = address_of(spec.path.c_str());
  attr.offsets = address_of(&spec.offset);
  attr.cookies = address_of(&spec.cookie);
  attr.cnt = 1;
  attr.multi_flags = spec.retprobe ? kUprobeMultiReturn : 0;
  attr.pid = spec.pid > 0 ? static_cast<uint32_t>(spec.pid) : 0;
  return static_cast<int>(syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr)));
}

// A program that returns 0, loaded as uprobe_multi, attached to calibration_target.
bool probe_uprobe_multi() {
  const bpf_insn insns[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = static_cast<bpf_attach_type>(kTraceUprobeMulti));
  UniqueFd prog(bpf_prog_load(BPF_PROG_TYPE_KPROBE, "ib_multi_probe", "GPL", insns, 2, &opts));
  if (!prog) return false;
  auto where = calibration_target_location();
  if (!where) return false;
  UniqueFd link(create_multi_link(prog.get(), {where->path, where->offset, 0, false, getpid()}));
  return static_cast<bool>(link);
}

}  // namespace

bool kernel_has_uprobe_multi() {
  static const bool has = probe_uprobe_multi();
  return has;
}

void use_uprobe_multi(bpf_program* program) {
  bpf_program__set_expected_attach_type(program, static_cast<bpf_attach_type>(kTraceUprobeMulti));
}

void UprobeLink::LinkDestroyer::operator()(bpf_link* link) const { bpf_link__destroy(link); }

UprobeLink::~UprobeLink() = default;

Result<UprobeLink> UprobeLink::attach(bpf_program* program, const UprobeSpec& spec, bool multi) {
  UprobeLink link;
  if (multi) {
    link.fd_ = UniqueFd(create_multi_link(bpf_program__fd(program), spec));
  } else {
    bpf_uprobe_opts opts{};
    opts.sz = sizeof(opts);
    opts.bpf_cookie = spec.cookie;
    opts.retprobe = spec.retprobe;
    link.link_.reset(bpf_program__attach_uprobe_opts(program, spec.pid, spec.path.c_str(), spec.offset, &opts));
  }
  if (!link)
    return Error::failure(fmt::format("attaching a {} at offset {:#x} of {}{}: {}", spec.retprobe ? "uretprobe" : "uprobe",
                                      spec.offset, spec.path, spec.pid > 0 ? fmt::format(" in process {}", spec.pid) : "",
                                      strerror(errno)));
  return link;
}

Result<std::vector<UprobeLink>> attach_call_probes(bpf_program* entry, bpf_program* exit, UprobeSpec spec,
                                                   bool return_probe, bool multi) {
  std::vector<UprobeLink> links;
  if (return_probe) {
    spec.retprobe = true;
    auto link = UprobeLink::attach(exit, spec, multi);
    if (!link) return link.error();
    links.push_back(std::move(link).value());
  }
  spec.retprobe = false;
  auto link = UprobeLink::attach(entry, spec, multi);
  if (!link) return link.error();
  links.push_back(std::move(link).value());
  return links;
}

LinkCloser::~LinkCloser() { wait(); }

// One thread per link: a close returns only after its grace periods. The first thread to start
// runs `at_begin` and takes the time while every link of the close is still in (the entry probe is
// what counts calls, and it may be any of them); the others wait for it before closing theirs.
std::shared_ptr<std::atomic<uint64_t>> LinkCloser::close(std::vector<UprobeLink> links,
                                                         std::function<void()> at_begin,
                                                         std::function<void()> at_end) {
  struct Beginning {
    std::once_flag once;
    std::function<void()> at_begin;
    std::function<void()> at_end;
    std::atomic<size_t> open_links{0};
    std::shared_ptr<std::atomic<uint64_t>> began = std::make_shared<std::atomic<uint64_t>>(0);
    void run() {
      std::call_once(once, [this] {
        if (at_begin) at_begin();
        began->store(static_cast<uint64_t>(monotonic_ns()));
      });
    }
    void closed_one() {
      if (open_links.fetch_sub(1) == 1 && at_end) at_end();
    }
  };
  auto beginning = std::make_shared<Beginning>();
  beginning->at_begin = std::move(at_begin);
  beginning->at_end = std::move(at_end);
  beginning->open_links = links.size();
  if (links.empty()) {
    beginning->run();
    if (beginning->at_end) beginning->at_end();
  }
  std::lock_guard lock(mutex_);
  for (UprobeLink& link : links)
    threads_.emplace_back([owned = std::move(link), beginning]() mutable {
      beginning->run();
      owned = UprobeLink();
      beginning->closed_one();
    });
  // Closes started long ago have returned: keep the list short.
  while (threads_.size() > 32) {
    threads_.front().join();
    threads_.erase(threads_.begin());
  }
  return beginning->began;
}

void LinkCloser::wait() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace ingero::tracer

/* CUDA runtime and driver calls: one uprobe/uretprobe pair attached to every probed
 * function; the attach cookie names the op and where its size/kind/stream arguments are. */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Not every libbpf names the sixth argument register. */
#ifndef PT_REGS_PARM6
#if defined(__TARGET_ARCH_x86)
#define PT_REGS_PARM6(x) ((x)->r9)
#elif defined(__TARGET_ARCH_arm64)
#define PT_REGS_PARM6(x) (((const struct user_pt_regs *)(x))->regs[5])
#endif
#endif

struct call_key {
  __u32 tid;
  __u32 op;
};

struct call_start {
  __u64 ts_ns;
  __u64 bytes;
  __s64 arg;
  __u64 stream;
  __u16 flags;
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct call_key);
  __type(value, struct call_start);
} calls_in_flight SEC(".maps");

/* Reads the value the cookie's source field points at: an argument register or a
 * stack slot above the return address (x86-64 SysV: arguments 7+ and the parts of
 * by-value structs that do not fit in registers). Returns false when not recorded. */
static __always_inline bool read_arg(struct pt_regs *ctx, __u32 src, __u64 *out)
{
  switch (src) {
  case 1: *out = PT_REGS_PARM1(ctx); return true;
  case 2: *out = PT_REGS_PARM2(ctx); return true;
  case 3: *out = PT_REGS_PARM3(ctx); return true;
  case 4: *out = PT_REGS_PARM4(ctx); return true;
  case 5: *out = PT_REGS_PARM5(ctx); return true;
  case 6: *out = PT_REGS_PARM6(ctx); return true;
  case IB_ARG_NONE: return false;
  default:
    if (src <= IB_ARG_STACK || src > IB_ARG_STACK + 8)
      return false;
    return bpf_probe_read_user(out, sizeof(*out),
                               (void *)(PT_REGS_SP(ctx) + 8 * (src - IB_ARG_STACK))) == 0;
  }
}

SEC("uprobe")
int cuda_call_entry(struct pt_regs *ctx)
{
  __u64 id = bpf_get_current_pid_tgid();
  if (!is_traced_tgid(id >> 32))
    return 0;
  __u64 cookie = bpf_get_attach_cookie(ctx);
  struct call_key key = {.tid = (__u32)id, .op = IB_COOKIE_OP(cookie)};
  struct call_start start = {};
  __u64 v;
  if (read_arg(ctx, IB_COOKIE_BYTES_SRC(cookie), &v)) {
    start.bytes = v;
    start.flags |= IB_EVENT_HAS_BYTES;
  }
  if (read_arg(ctx, IB_COOKIE_ARG_SRC(cookie), &v)) {
    start.arg = v;
    start.flags |= IB_EVENT_HAS_ARG;
  }
  if (read_arg(ctx, IB_COOKIE_STREAM_SRC(cookie), &v)) {
    start.stream = v;
    start.flags |= IB_EVENT_HAS_STREAM;
  }
  start.ts_ns = bpf_ktime_get_ns();
  if (bpf_map_update_elem(&calls_in_flight, &key, &start, BPF_ANY))
    count_loss(IB_LOSS_CUDA_INFLIGHT);
  return 0;
}

SEC("uretprobe")
int cuda_call_return(struct pt_regs *ctx)
{
  __u64 now = bpf_ktime_get_ns();
  __u64 id = bpf_get_current_pid_tgid();
  __u64 cookie = bpf_get_attach_cookie(ctx);
  struct call_key key = {.tid = (__u32)id, .op = IB_COOKIE_OP(cookie)};
  struct call_start *start = bpf_map_lookup_elem(&calls_in_flight, &key);
  if (!start)
    return 0;
  struct ib_event *e = reserve_event(&cuda_ring, IB_RING_CUDA);
  if (e) {
    e->ts_ns = start->ts_ns;
    e->dur_ns = now - start->ts_ns;
    e->pid = id >> 32;
    e->tid = (__u32)id;
    e->op = key.op;
    e->ret = (__s32)PT_REGS_RC(ctx);
    e->bytes = start->bytes;
    e->arg = start->arg;
    e->stream = start->stream;
    e->flags = start->flags | IB_EVENT_HAS_RET;
    submit_event(&cuda_ring, e);
  }
  bpf_map_delete_elem(&calls_in_flight, &key);
  return 0;
}

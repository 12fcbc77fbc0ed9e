/* SPDX-License-Identifier: GPL-2.0 */
/* CUDA runtime/driver and NCCL calls: one uprobe (and, unless the call is probed at
 * entry only, one uretprobe) attached to every probed function; the attach cookie
 * names the op, where its size/arg/stream arguments are, and how to record it.
 * Every call is counted, and its latency histogrammed, in the kernel (runqlat's
 * model); a call travels to user space as an event unless it is a hot call (a kernel
 * launch) faster than call_stream_min_ns. Entry and return each touch one entry of
 * call_stats, which holds the thread's call in progress beside its totals. A hot function
 * may be probed per process and duty-cycled by user space (tracer/call_probes.h): these
 * programs then only run while its probes are attached. */
#include "common.bpf.h"
#include "stack_capture.bpf.h"

/* Not every libbpf names the sixth argument register. */
#ifndef PT_REGS_PARM6
#if defined(__TARGET_ARCH_x86)
#define PT_REGS_PARM6(x) ((x)->r9)
#elif defined(__TARGET_ARCH_arm64)
#define PT_REGS_PARM6(x) (((const struct user_pt_regs *)(x))->regs[5])
#endif
#endif

const volatile __u64 call_stream_min_ns = 1000000;
/* Each stored slow call (call_stream_min_ns or longer) carries the stack that made it (set by user
 * space with the CPU profile on). Not the fast calls of unhot functions, which are stored too: a walk
 * costs 10-30 us, more than such a call. */
const volatile bool call_stacks = false;

/* Per op: how many times user space began changing that function's probes (high 32 bits) and how
 * many of those changes have ended (low 32 bits): a duty cycle's window edges, which attach and
 * detach its probes one link at a time and hold up the calling process meanwhile. A call is timed
 * only if no change was under way at its entry and none began or ended before its return: otherwise
 * an entry of one window would pair with a return of the next and time the gap, or the call would be
 * timed with the edge's own stall in it. Written by user space through the mmapped .bss, read here. */
__u64 call_edges[IB_OP_COUNT];

static __always_inline __u64 edges_of(__u32 op)
{
  return op < IB_OP_COUNT ? *(volatile __u64 *)&call_edges[op] : 0;
}

static __always_inline bool edge_under_way(__u64 edges)
{
  return (edges >> 32) != (edges & 0xffffffffu);
}

/* A call's stack pointer as its return probe fires, against its entry: x86-64's `ret` has popped
 * the return address; arm64 returns through the link register. */
#if defined(__TARGET_ARCH_x86)
#define IB_RETURN_SP_DELTA 8
#else
#define IB_RETURN_SP_DELTA 0
#endif

/* Per (thread, function): totals and the call in progress (events.h). */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct ib_call_key);
  __type(value, struct ib_call_slot);
} call_stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, struct ib_call_hist_key);
  __type(value, struct ib_call_hist);
} call_hists SEC(".maps");

/* Per op: 1 once user space probes the function per process (IB_CALL_SCOPED links) instead
 * of once for every process. Each entry counts through one kind of link only, so that a
 * call is counted once while user space replaces one kind by the other. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, IB_OP_COUNT);
  __type(key, __u32);
  __type(value, __u8);
} scoped_ops SEC(".maps");

/* Where argument register `n` (1..6) sits in the saved registers. The register is then
 * read with a helper: a switch of direct ctx loads compiles to a computed ctx offset,
 * which the verifier refuses. */
static __always_inline const void *arg_register(struct pt_regs *ctx, __u32 n)
{
  switch (n) {
  case 1: return &PT_REGS_PARM1(ctx);
  case 2: return &PT_REGS_PARM2(ctx);
  case 3: return &PT_REGS_PARM3(ctx);
  case 4: return &PT_REGS_PARM4(ctx);
  case 5: return &PT_REGS_PARM5(ctx);
  case 6: return &PT_REGS_PARM6(ctx);
  default: return NULL;
  }
}

/* Reads the value the cookie's source field points at: an argument register or a
 * stack slot above the return address (x86-64 SysV: arguments 7+ and the parts of
 * by-value structs that do not fit in registers). Returns false when not recorded. */
static __always_inline bool read_arg(struct pt_regs *ctx, __u32 src, __u64 *out)
{
  if (src == IB_ARG_NONE)
    return false;
  if (src >= 1 && src <= 6)
    return bpf_probe_read_kernel(out, sizeof(*out), arg_register(ctx, src)) == 0;
  if (src <= IB_ARG_STACK || src > IB_ARG_STACK + 8)
    return false;
  return bpf_probe_read_user(out, sizeof(*out), (void *)(PT_REGS_SP(ctx) + 8 * (src - IB_ARG_STACK))) == 0;
}

/* Bytes of one element of an ncclDataType_t (nccl.h: int8, uint8, int32, uint32,
 * int64, uint64, float16, float32, float64, bfloat16, then the 1-byte float8s). */
static __always_inline __u64 nccl_element_bytes(__s64 datatype)
{
  switch (datatype) {
  case 2: case 3: case 7: return 4;
  case 4: case 5: case 8: return 8;
  case 6: case 9: return 2;
  default: return 1;
  }
}

/* Records the arguments a call was made with, as the cookie describes them, as the
 * slot's call in progress. */
static __always_inline void read_call(struct pt_regs *ctx, __u64 cookie, struct ib_call_slot *slot)
{
  __u64 v;
  slot->flags = 0;
  slot->bytes = 0;
  slot->arg = 0;
  slot->stream = 0;
  if (read_arg(ctx, IB_COOKIE_BYTES_SRC(cookie), &v)) {
    slot->bytes = v;
    slot->flags |= IB_EVENT_HAS_BYTES;
  }
  if (read_arg(ctx, IB_COOKIE_ARG_SRC(cookie), &v)) {
    slot->arg = v;
    slot->flags |= IB_EVENT_HAS_ARG;
  }
  if (read_arg(ctx, IB_COOKIE_STREAM_SRC(cookie), &v)) {
    slot->stream = v;
    slot->flags |= IB_EVENT_HAS_STREAM;
  }
  if ((IB_COOKIE_FLAGS(cookie) & IB_CALL_NCCL_ELEMENTS) && (slot->flags & IB_EVENT_HAS_BYTES))
    slot->bytes *= nccl_element_bytes(slot->arg);
}

/* Only the calling thread updates its own call_stats entries: no atomics needed. */
SEC("uprobe")
int cuda_call_entry(struct pt_regs *ctx)
{
  __u64 id = bpf_get_current_pid_tgid();
  __u32 pid = id >> 32;
  if (!is_traced_tgid(pid))
    return 0;
  __u64 cookie = bpf_get_attach_cookie(ctx);
  __u32 op = IB_COOKIE_OP(cookie);
  __u8 *scoped = bpf_map_lookup_elem(&scoped_ops, &op);
  if (scoped && (*scoped != 0) != ((IB_COOKIE_FLAGS(cookie) & IB_CALL_SCOPED) != 0))
    return 0;
  struct ib_call_key key = {.tid = (__u32)id, .op = op};
  static const struct ib_call_slot zero;
  clock_running_thread(key.tid, pid); /* a duty cycle times its callers on their own clock */
  struct ib_call_slot *slot = lookup_or_init(&call_stats, &key, &zero, IB_LOSS_CALL_STATS);
  if (!slot)
    return 0;
  if (slot->stats.pid == 0)
    slot->stats.pid = pid;
  read_call(ctx, cookie, slot);
  slot->stats.calls += 1;
  slot->stats.bytes += slot->bytes;
  /* The last call's return never came (its return probe went with its window): it is not timed. */
  if (slot->start_ns != 0)
    slot->stats.cut += 1;
  /* An entry-only call is never timed; a call without a return probe leaves start_ns 0. */
  slot->start_ns = (IB_COOKIE_FLAGS(cookie) & IB_CALL_ENTRY_ONLY) ? 0 : bpf_ktime_get_ns();
  slot->entry_sp = PT_REGS_SP(ctx);
  slot->edges = edges_of(op);
  return 0;
}

static __always_inline void add_to_histogram(__u32 pid, __u32 op, __u64 dur)
{
  static const struct ib_call_hist zero;
  struct ib_call_hist_key key = {.pid = pid, .op = op};
  struct ib_call_hist *h = lookup_or_init(&call_hists, &key, &zero, IB_LOSS_CALL_STATS);
  if (!h)
    return;
  __u32 slot = log2_slot(dur, IB_CALL_HIST_SLOTS);
  if (slot < IB_CALL_HIST_SLOTS)
    __sync_fetch_and_add(&h->slots[slot], 1);
}

static __always_inline bool stream_call(const struct ib_call_key *key, const struct ib_call_slot *slot, __u64 dur,
                                        __s64 ret)
{
  struct ib_event *e = reserve_event(&cuda_ring, IB_RING_CUDA);
  if (!e)
    return false;
  e->ts_ns = slot->start_ns;
  e->dur_ns = dur;
  e->pid = slot->stats.pid;
  e->tid = key->tid;
  e->op = key->op;
  e->ret = ret;
  e->bytes = slot->bytes;
  e->arg = slot->arg;
  e->stream = slot->stream;
  e->flags = slot->flags | IB_EVENT_HAS_RET;
  submit_event(&cuda_ring, e);
  return true;
}

/* The stack of a stored call, as its return probe fires (the caller's instruction after the call, its
 * callers, its Python frames), tagged with the event's tid, start and op. Taken only for a stored
 * call: the cost stays on the calls that are slow or rare. */
static __always_inline void send_call_stack(struct pt_regs *ctx, const struct ib_call_key *key, __u64 start_ns)
{
  struct ib_profile_sample *s = ib_stack_reserve(IB_LOSS_EVENT_STACKS, IB_STACK_EVENT);
  if (!s)
    return;
  s->ts_ns = start_ns;
  s->op = key->op;
  ib_stack_fill_submit(ctx, s, false);
}

SEC("uretprobe")
int cuda_call_return(struct pt_regs *ctx)
{
  __u64 now = bpf_ktime_get_ns();
  __u64 id = bpf_get_current_pid_tgid();
  __u64 cookie = bpf_get_attach_cookie(ctx);
  struct ib_call_key key = {.tid = (__u32)id, .op = IB_COOKIE_OP(cookie)};
  struct ib_call_slot *slot = bpf_map_lookup_elem(&call_stats, &key);
  if (!slot)
    return 0;
  /* Only the return of the call whose entry is open, with the stack back where that entry had it
   * (not a nested or an earlier call of the same function), and no edge of the probes between. */
  bool own = slot->start_ns != 0 && PT_REGS_SP(ctx) == slot->entry_sp + IB_RETURN_SP_DELTA;
  if (!own || slot->edges != edges_of(key.op) || edge_under_way(slot->edges)) {
    slot->stats.cut += 1;
    if (own)
      slot->start_ns = 0; /* its entry is answered: the next entry must not count it again */
    return 0;
  }
  __u64 dur = now - slot->start_ns;
  __s64 ret = (__s32)PT_REGS_RC(ctx);
  add_to_histogram(slot->stats.pid, key.op, dur);
  bool hot = IB_COOKIE_FLAGS(cookie) & IB_CALL_HOT;
  bool streamed = (!hot || dur >= call_stream_min_ns) && stream_call(&key, slot, dur, ret);
  if (streamed && call_stacks && dur >= call_stream_min_ns && key.op != IB_OP_NONE) /* not calibration calls */
    send_call_stack(ctx, &key, slot->start_ns);
  slot->stats.returns += 1;
  slot->stats.errors += ret != 0;
  slot->stats.total_ns += dur;
  stat_max(&slot->stats.max_ns, dur);
  slot->stats.streamed += streamed;
  slot->start_ns = 0;
  return 0;
}

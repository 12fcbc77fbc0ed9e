/* SPDX-License-Identifier: GPL-2.0 */
/* Memory: page allocations (count, bytes) and user page faults, counted per thread,
 * and streamed in bursts, so a timeline shows when memory was touched at a bounded
 * event rate. A burst holds at least mem_burst_pages; it closes once it also spans
 * mem_burst_min_ns, or before a fault that comes more than mem_burst_min_ns after its
 * last one (a full burst never spans a pause). So a thread emits at most one burst of
 * each kind per mem_burst_pages events and at most two per mem_burst_min_ns, however
 * fast it faults (a loader touching 400 MB batches would otherwise emit thousands a
 * second). The remainder of a burst is emitted when the thread exits, and read from the
 * map by user space when tracing stops: the bursts of a thread add up to its exact
 * counters. Those counters sit in the same per-thread entry as the bursts, so that a page
 * event looks up one entry after the filter and adds without atomics: the entry is only
 * written from its own thread's context (which runs on one CPU at a time, and a program
 * does not nest in itself there). They move to thread_stats when the thread exits.
 * A page_faults burst's bytes are those of its copy-on-write faults (writes to present,
 * write-protected pages: x86's error code PROT|WRITE), 4 KiB each. A forked DataLoader
 * worker grows by them as it touches the Python objects it shares with the main process (a
 * read writes the reference count): counted here, that growth is seen whole, where
 * smaps_rollup is too dear to read often on a large process. */
#include "common.bpf.h"

#define X86_PF_PROT 0x1
#define X86_PF_WRITE 0x2

const volatile __u64 mem_burst_pages = 64;
const volatile __u64 mem_burst_min_ns = 10000000;

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, IB_MAX_THREADS);
  __type(key, __u32);
  __type(value, struct ib_mem_burst);
} mem_bursts SEC(".maps");

static __always_inline struct ib_mem_burst *burst_of(__u32 tid, __u32 pid)
{
  struct ib_mem_burst zero = {.pid = pid};
  return lookup_or_init(&mem_bursts, &tid, &zero, IB_LOSS_MEM_BURSTS);
}

static __always_inline void emit_burst(__u32 op, __u64 start, __u64 last, __u64 count, __u64 bytes, __u32 pid,
                                       __u32 tid)
{
  struct ib_event *e = reserve_event(&proc_ring, IB_RING_PROC);
  if (!e)
    return;
  e->ts_ns = start;
  e->dur_ns = last - start;
  e->pid = pid;
  e->tid = tid;
  e->op = op;
  e->arg = count;
  e->bytes = bytes;
  e->flags = IB_EVENT_HAS_ARG | IB_EVENT_HAS_BYTES;
  submit_event(&proc_ring, e);
}

/* Whether a full-sized burst whose last event was at `last` must be emitted before an event at `now`. */
static __always_inline bool burst_paused(__u64 count, __u64 last, __u64 now)
{
  return count >= mem_burst_pages && now - last > mem_burst_min_ns;
}

/* Whether a burst that now holds `count` events from start to now is complete. */
static __always_inline bool burst_full(__u64 count, __u64 start, __u64 now)
{
  return count >= mem_burst_pages && now - start >= mem_burst_min_ns;
}

/* Emits the thread's open burst of each kind, from its start to `last`, and empties it. */
static __always_inline void close_alloc_burst(struct ib_mem_burst *b, __u64 last, __u32 pid, __u32 tid)
{
  emit_burst(IB_OP_PAGE_ALLOCS, b->alloc_start_ns, last, b->allocs, b->alloc_bytes, pid, tid);
  b->allocs = 0;
  b->alloc_bytes = 0;
}

static __always_inline void close_fault_burst(struct ib_mem_burst *b, __u64 last, __u32 pid, __u32 tid)
{
  emit_burst(IB_OP_PAGE_FAULTS, b->fault_start_ns, last, b->faults, b->fault_cow * IB_PAGE_BYTES, pid, tid);
  b->faults = 0;
  b->fault_cow = 0;
}

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(on_page_alloc, struct page *page, unsigned int order)
{
  __u64 id = bpf_get_current_pid_tgid();
  __u32 pid = id >> 32, tid = (__u32)id;
  if (!is_traced_tgid(pid))
    return 0;
  __u64 bytes = (__u64)IB_PAGE_BYTES << order;
  struct ib_mem_burst *b = burst_of(tid, pid);
  if (!b)
    return 0;
  b->page_allocs += 1;
  b->page_alloc_bytes += bytes;
  __u64 now = bpf_ktime_get_ns();
  if (burst_paused(b->allocs, b->alloc_last_ns, now))
    close_alloc_burst(b, b->alloc_last_ns, pid, tid);
  if (b->allocs == 0)
    b->alloc_start_ns = now;
  b->alloc_last_ns = now;
  b->allocs += 1;
  b->alloc_bytes += bytes;
  if (burst_full(b->allocs, b->alloc_start_ns, now))
    close_alloc_burst(b, now, pid, tid);
  return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(on_page_fault_user, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
  __u64 id = bpf_get_current_pid_tgid();
  __u32 pid = id >> 32, tid = (__u32)id;
  if (!is_traced_tgid(pid))
    return 0;
  struct ib_mem_burst *b = burst_of(tid, pid);
  if (!b)
    return 0;
  b->page_faults += 1;
  __u64 now = bpf_ktime_get_ns();
  if (burst_paused(b->faults, b->fault_last_ns, now))
    close_fault_burst(b, b->fault_last_ns, pid, tid);
  if (b->faults == 0)
    b->fault_start_ns = now;
  b->fault_last_ns = now;
  b->faults += 1;
  if ((error_code & (X86_PF_PROT | X86_PF_WRITE)) == (X86_PF_PROT | X86_PF_WRITE)) {
    b->fault_cow += 1;
    b->page_faults_cow += 1;
  }
  if (burst_full(b->faults, b->fault_start_ns, now))
    close_fault_burst(b, now, pid, tid);
  return 0;
}

/* A thread's last partial bursts, and its page counters into its thread_stats. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_mem_thread_exit, struct task_struct *p)
{
  __u32 tid = p->pid;
  struct ib_mem_burst *b = bpf_map_lookup_elem(&mem_bursts, &tid);
  if (!b)
    return 0;
  struct ib_thread_stats *s = stats_of(tid, b->pid);
  if (s) {
    __sync_fetch_and_add(&s->page_faults, b->page_faults);
    __sync_fetch_and_add(&s->page_faults_cow, b->page_faults_cow);
    __sync_fetch_and_add(&s->page_allocs, b->page_allocs);
    __sync_fetch_and_add(&s->page_alloc_bytes, b->page_alloc_bytes);
  }
  if (b->faults)
    close_fault_burst(b, b->fault_last_ns, b->pid, tid);
  if (b->allocs)
    close_alloc_burst(b, b->alloc_last_ns, b->pid, tid);
  bpf_map_delete_elem(&mem_bursts, &tid);
  return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/* What every BPF program shares: the run's configuration and the shared maps, defined
 * once in maps.bpf.c and declared extern here (the per-concern objects are linked
 * into one object at build time), and the helpers that use them. */
#ifndef INGERO_COMMON_BPF_H
#define INGERO_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "events.h"

#define IB_MAX_TGIDS 65536
#define IB_MAX_THREADS 131072

/* Configuration, set by user space before load. system_wide lifts the tgid filter. */
extern const volatile bool system_wide;
extern const volatile __u64 offcpu_min_ns;
extern const volatile __u64 iowait_min_ns;
extern const volatile __u64 runq_min_ns;
/* Wake the reader only once this much is waiting; it also drains on a short timer.
 * A wakeup per event would cost more than the event. */
extern const volatile __u64 wakeup_bytes;

struct ib_tgid_filter_map {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, IB_MAX_TGIDS);
  __type(key, __u32);
  __type(value, __u8);
};
struct ib_thread_stats_map {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, IB_MAX_THREADS);
  __type(key, __u32);
  __type(value, struct ib_thread_stats);
};
struct ib_task_clocks_map {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, IB_MAX_THREADS);
  __type(key, __u32);
  __type(value, struct ib_task_clock);
};
struct ib_histograms_map {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, IB_MAX_TGIDS * IB_HIST_COUNT);
  __type(key, struct ib_hist_key);
  __type(value, struct ib_hist);
};
struct ib_losses_map {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, IB_LOSS_COUNT);
  __type(key, __u32);
  __type(value, __u64);
};
struct ib_ring_offered_map {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, IB_RING_COUNT);
  __type(key, __u32);
  __type(value, __u64);
};
/* Processes whose Python frames are read (tgid -> layout; bpf/python_stack.bpf.h). */
#define IB_MAX_PYTHON_PROCS 1024
struct ib_python_layouts_map {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, IB_MAX_PYTHON_PROCS);
  __type(key, __u32);
  __type(value, struct ib_python_layout);
};
struct ib_python_walks_map {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, IB_PY_WALK_COUNT);
  __type(key, __u32);
  __type(value, __u64);
};
/* Sizes are set by user space before load (TraceOptions.ringbuf_bytes). */
struct ib_ring_map {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 20);
};

/* Processes of the traced tree (tgid -> 1). */
extern struct ib_tgid_filter_map tgid_filter SEC(".maps");
extern struct ib_thread_stats_map thread_stats SEC(".maps");
/* The scheduler programs' per-thread timestamps (sched.bpf.c); user space reads a running
 * thread's on-CPU time from them. */
extern struct ib_task_clocks_map task_clocks SEC(".maps");
extern struct ib_histograms_map histograms SEC(".maps");
/* Undelivered events: ring reservations that failed, map inserts that failed. */
extern struct ib_losses_map losses SEC(".maps");
/* Every event a program tried to put on each ring (delivered or not), so that user
 * space can show that offered = written + dropped. */
extern struct ib_ring_offered_map ring_offered SEC(".maps");
/* The CPython layout of each traced Python process, filled by user space (find_python_runtime). */
extern struct ib_python_layouts_map python_layouts SEC(".maps");
/* The kernel's walks of Python frames, per enum ib_py_walk_outcome (stack_capture.bpf.h). */
extern struct ib_python_walks_map python_walks SEC(".maps");
extern struct ib_ring_map cuda_ring SEC(".maps");
extern struct ib_ring_map sched_ring SEC(".maps");
extern struct ib_ring_map proc_ring SEC(".maps");
/* CPU samples and the stacks of stored events (bpf/stack_capture.bpf.h). */
extern struct ib_ring_map profile_ring SEC(".maps");

/* Membership of the enrolled tree, kept even when system_wide traces everything
 * (user space looks for CUDA libraries in the tree's processes). */
static __always_inline bool in_traced_tree(__u32 tgid)
{
  return bpf_map_lookup_elem(&tgid_filter, &tgid) != NULL;
}

static __always_inline bool is_traced_tgid(__u32 tgid)
{
  return system_wide || in_traced_tree(tgid);
}

static __always_inline void count_loss(__u32 source)
{
  __u64 *n = bpf_map_lookup_elem(&losses, &source);
  if (n)
    __sync_fetch_and_add(n, 1);
}

/* The value under key, created from `zero` on first use. A map too full to take
 * the key is counted as a loss of `loss_source`, never silent. */
static __always_inline void *lookup_or_init(void *map, const void *key, const void *zero, __u32 loss_source)
{
  void *value = bpf_map_lookup_elem(map, key);
  if (value)
    return value;
  /* Another CPU may have inserted the key since the lookup: EEXIST is fine. */
  bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
  value = bpf_map_lookup_elem(map, key);
  if (!value)
    count_loss(loss_source);
  return value;
}

/* Reserves an event on a ring; a failure is counted, never silent. */
static __always_inline struct ib_event *reserve_event(void *ring, __u32 ring_id)
{
  __u64 *offered = bpf_map_lookup_elem(&ring_offered, &ring_id);
  if (offered)
    __sync_fetch_and_add(offered, 1); /* an interrupt's program may share this CPU's slot */
  struct ib_event *e = bpf_ringbuf_reserve(ring, sizeof(*e), 0);
  if (!e) {
    count_loss(ring_id);
    return NULL;
  }
  __builtin_memset(e, 0, sizeof(*e));
  return e;
}

static __always_inline void submit_event(void *ring, struct ib_event *e)
{
  __u64 flags = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
                                                                            : BPF_RB_NO_WAKEUP;
  bpf_ringbuf_submit(e, flags);
}

/* An interval or call of one thread, on a ring; false when the ring was full. */
static __always_inline bool emit_span(void *ring, __u32 ring_id, __u32 op, __u64 start, __u64 dur, __u32 pid,
                                      __u32 tid, __s64 arg, __u16 flags)
{
  struct ib_event *e = reserve_event(ring, ring_id);
  if (!e)
    return false;
  e->ts_ns = start;
  e->dur_ns = dur;
  e->pid = pid;
  e->tid = tid;
  e->op = op;
  e->arg = arg;
  e->flags = flags;
  submit_event(ring, e);
  return true;
}

/* The stats record of a thread, created on first use. */
static __always_inline struct ib_thread_stats *stats_of(__u32 tid, __u32 pid)
{
  struct ib_thread_stats zero = {.pid = pid};
  return lookup_or_init(&thread_stats, &tid, &zero, IB_LOSS_THREAD_STATS);
}

/* A traced thread seen running by a probe: its clock counts it on the CPU from now at the
 * latest when the scheduler programs have not seen it switch in (it has run since before it
 * was traced, or sched_switch did not report its switch in), so that a reading while it runs
 * grows. */
static __always_inline void clock_running_thread(__u32 tid, __u32 pid)
{
  struct ib_task_clock *c = bpf_map_lookup_elem(&task_clocks, &tid);
  if (c) {
    if (!c->oncpu_since)
      c->oncpu_since = bpf_ktime_get_ns();
    return;
  }
  struct ib_task_clock running = {.oncpu_since = bpf_ktime_get_ns()};
  if (bpf_map_update_elem(&task_clocks, &tid, &running, BPF_NOEXIST) == 0)
    stats_of(tid, pid);
}

static __always_inline __u32 log2_slot(__u64 v, __u32 slots)
{
  __u32 slot = 0;
#pragma unroll
  for (int shift = 32; shift > 0; shift /= 2) {
    if (v >= (1ull << shift)) {
      v >>= shift;
      slot += shift;
    }
  }
  return slot < slots ? slot : slots - 1;
}

/* Adds one value (ns) to the pid's log2 microsecond histogram. */
static __always_inline void hist_add(__u32 pid, __u32 metric, __u64 ns)
{
  static const struct ib_hist zero;
  struct ib_hist_key key = {.pid = pid, .metric = metric};
  struct ib_hist *h = lookup_or_init(&histograms, &key, &zero, IB_LOSS_HISTOGRAMS);
  if (!h)
    return;
  __u32 slot = log2_slot(ns / 1000, IB_HIST_SLOTS);
  if (slot < IB_HIST_SLOTS)
    __sync_fetch_and_add(&h->slots[slot], 1);
}

static __always_inline void stat_max(__u64 *slot, __u64 v)
{
  if (v > *slot)
    *slot = v;
}

#endif /* INGERO_COMMON_BPF_H */

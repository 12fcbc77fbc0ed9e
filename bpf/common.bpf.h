/* Maps and helpers shared by every BPF object. Each object declares these maps;
 * user space creates them once (with the first object) and hands the same map
 * to the others before they load, so all programs see one filter, one set of
 * counters and one loss table. */
#ifndef INGERO_COMMON_BPF_H
#define INGERO_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "events.h"

#define IB_MAX_TGIDS 65536
#define IB_MAX_THREADS 131072

/* Set before load. system_wide lifts the tgid filter. */
const volatile bool system_wide = false;
const volatile __u64 offcpu_min_ns = 0;
const volatile __u64 runq_min_ns = 0;
/* Wake the reader only once this much is waiting; it also drains on a short timer.
 * A wakeup per event would cost more than the event. */
const volatile __u64 wakeup_bytes = 0;

/* Processes of the traced tree (tgid -> 1). */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, IB_MAX_TGIDS);
  __type(key, __u32);
  __type(value, __u8);
} tgid_filter SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, IB_MAX_THREADS);
  __type(key, __u32);
  __type(value, struct ib_thread_stats);
} thread_stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, IB_MAX_TGIDS * IB_HIST_COUNT);
  __type(key, struct ib_hist_key);
  __type(value, struct ib_hist);
} histograms SEC(".maps");

/* Undelivered events: ring reservations that failed, map inserts that failed. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, IB_LOSS_COUNT);
  __type(key, __u32);
  __type(value, __u64);
} losses SEC(".maps");

/* Every event a program tried to put on each ring (delivered or not), so that
 * user space can show that offered = written + dropped. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, IB_RING_COUNT);
  __type(key, __u32);
  __type(value, __u64);
} ring_offered SEC(".maps");

/* Sizes are set by user space before load (TraceOptions.ringbuf_bytes). */
struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 20);
} cuda_ring SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 20);
} sched_ring SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 20);
} proc_ring SEC(".maps");

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

static __always_inline bool current_is_traced(void)
{
  return is_traced_tgid(bpf_get_current_pid_tgid() >> 32);
}

static __always_inline void count_loss(__u32 source)
{
  __u64 *n = bpf_map_lookup_elem(&losses, &source);
  if (n)
    __sync_fetch_and_add(n, 1);
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

/* The stats record of a thread, created on first use. */
static __always_inline struct ib_thread_stats *stats_of(__u32 tid, __u32 pid)
{
  struct ib_thread_stats *s = bpf_map_lookup_elem(&thread_stats, &tid);
  if (s)
    return s;
  struct ib_thread_stats zero = {.pid = pid};
  if (bpf_map_update_elem(&thread_stats, &tid, &zero, BPF_NOEXIST) && 
      !bpf_map_lookup_elem(&thread_stats, &tid)) {
    count_loss(IB_LOSS_THREAD_STATS);
    return NULL;
  }
  return bpf_map_lookup_elem(&thread_stats, &tid);
}

static __always_inline __u32 log2_slot(__u64 v)
{
  __u32 slot = 0;
#pragma unroll
  for (int shift = 32; shift > 0; shift /= 2) {
    if (v >= (1ull << shift)) {
      v >>= shift;
      slot += shift;
    }
  }
  return slot < IB_HIST_SLOTS ? slot : IB_HIST_SLOTS - 1;
}

/* Adds one value (ns) to the pid's log2 microsecond histogram. */
static __always_inline void hist_add(__u32 pid, __u32 metric, __u64 ns)
{
  struct ib_hist_key key = {.pid = pid, .metric = metric};
  struct ib_hist *h = bpf_map_lookup_elem(&histograms, &key);
  if (!h) {
    static const struct ib_hist zero;
    bpf_map_update_elem(&histograms, &key, &zero, BPF_NOEXIST);
    h = bpf_map_lookup_elem(&histograms, &key);
    if (!h)
      return;
  }
  __u32 slot = log2_slot(ns / 1000);
  if (slot < IB_HIST_SLOTS)
    __sync_fetch_and_add(&h->slots[slot], 1);
}

static __always_inline void stat_max(__u64 *slot, __u64 v)
{
  if (v > *slot)
    *slot = v;
}

#endif /* INGERO_COMMON_BPF_H */

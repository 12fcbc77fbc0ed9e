/* SPDX-License-Identifier: GPL-2.0 */
/* Block I/O: issue -> complete latency and bytes, attributed to the thread that submitted
 * the request; and the pages each thread's reads bring into the page cache (a miss that the
 * disk or readahead filled).
 *
 * With an I/O scheduler (mq-deadline, bfq) a request is inserted in its submitter's context but
 * often issued later by a kblockd worker (when the device's queue was full, or as an earlier
 * request completed): the owner is taken at insert, and the issue only starts the clock. */
#include "common.bpf.h"

struct io_start {
  __u64 ts_ns; /* 0: inserted, not issued yet */
  __u32 pid;
  __u32 tid;
};

/* Requests of traced threads, from insert or issue to completion; a request that finds the map
 * full is counted as lost. Requests are preallocated and reused, so an entry whose request went
 * away without completing (merged into another) is deleted then. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, struct request *);
  __type(value, struct io_start);
} io_starts SEC(".maps");

/* The current thread owns rq when it is traced: it submitted the request. */
static __always_inline void own_request(struct request *rq, __u64 ts_ns)
{
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32;
  if (!is_traced_tgid(tgid))
    return;
  struct io_start start = {.ts_ns = ts_ns, .pid = tgid, .tid = (__u32)id};
  if (bpf_map_update_elem(&io_starts, &rq, &start, BPF_ANY))
    count_loss(IB_LOSS_IO_INFLIGHT);
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(on_block_rq_insert, struct request *rq)
{
  own_request(rq, 0);
  return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(on_block_rq_issue, struct request *rq)
{
  __u64 now = bpf_ktime_get_ns();
  struct io_start *inserted = bpf_map_lookup_elem(&io_starts, &rq);
  if (inserted) /* a traced thread's request, issued here or by a kblockd worker */
    inserted->ts_ns = now;
  else
    own_request(rq, now);
  return 0;
}

/* rq was merged into another request and is freed without completing. */
SEC("tp_btf/block_rq_merge")
int BPF_PROG(on_block_rq_merge, struct request *rq)
{
  bpf_map_delete_elem(&io_starts, &rq);
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(on_block_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
  struct io_start *start = bpf_map_lookup_elem(&io_starts, &rq);
  if (!start)
    return 0;
  if (!start->ts_ns) { /* completed without an issue we saw: nothing to time */
    bpf_map_delete_elem(&io_starts, &rq);
    return 0;
  }
  __u64 now = bpf_ktime_get_ns();
  __u64 dur = now > start->ts_ns ? now - start->ts_ns : 0;
  __u32 pid = start->pid, tid = start->tid;
  __u64 ts = start->ts_ns;
  bpf_map_delete_elem(&io_starts, &rq);

  struct ib_thread_stats *s = stats_of(tid, pid);
  if (s) {
    __sync_fetch_and_add(&s->io_count, 1);
    __sync_fetch_and_add(&s->io_bytes, nr_bytes);
    __sync_fetch_and_add(&s->io_ns, dur);
  }
  hist_add(pid, IB_HIST_IO_US, dur);

  struct ib_event *e = reserve_event(&proc_ring, IB_RING_PROC);
  if (!e)
    return 0;
  e->ts_ns = ts;
  e->dur_ns = dur;
  e->pid = pid;
  e->tid = tid;
  e->op = IB_OP_BLOCK_IO;
  e->bytes = nr_bytes;
  e->ret = error;
  e->flags = IB_EVENT_HAS_BYTES | IB_EVENT_HAS_RET;
  submit_event(&proc_ring, e);
  return 0;
}

/* Kernels before 6.18 keep a folio's flags in a plain unsigned long. */
struct folio___flags_ulong {
  unsigned long flags;
} __attribute__((preserve_access_index));

/* folio_nr_pages(): a large folio (PG_head) keeps its order in the low byte of _flags_1
 * (6.2 on); elsewhere a folio counts as one page, an undercount of large folios. */
static __always_inline __u64 folio_pages(struct folio *folio)
{
  unsigned long flags;
  if (bpf_core_type_exists(memdesc_flags_t))
    flags = BPF_CORE_READ(folio, flags.f);
  else
    flags = BPF_CORE_READ((struct folio___flags_ulong *)folio, flags);
  if (!(flags & (1UL << bpf_core_enum_value(enum pageflags, PG_head))))
    return 1;
  if (!bpf_core_field_exists(folio->_flags_1))
    return 1;
  return 1ULL << (BPF_CORE_READ(folio, _flags_1) & 0x1f);
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(on_page_cache_add, struct folio *folio)
{
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32;
  if (!is_traced_tgid(tgid))
    return 0;
  struct ib_thread_stats *s = stats_of((__u32)id, tgid);
  if (s)
    __sync_fetch_and_add(&s->cache_pages_added, folio_pages(folio));
  return 0;
}

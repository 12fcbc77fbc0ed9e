/* Memory: page allocations (count, bytes) and user page faults, counted per thread. */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define PAGE_BYTES 4096

static __always_inline struct ib_thread_stats *current_stats(void)
{
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32;
  if (!is_traced_tgid(tgid))
    return NULL;
  return stats_of((__u32)id, tgid);
}

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(on_page_alloc, struct page *page, unsigned int order, gfp_t gfp_flags, int migratetype)
{
  struct ib_thread_stats *s = current_stats();
  if (!s)
    return 0;
  __sync_fetch_and_add(&s->page_allocs, 1);
  __sync_fetch_and_add(&s->page_alloc_bytes, (__u64)PAGE_BYTES << order);
  return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(on_page_fault_user, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
  struct ib_thread_stats *s = current_stats();
  if (s)
    __sync_fetch_and_add(&s->page_faults, 1);
  return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/* On-CPU samples of the traced threads: a perf_event program on the kernel's software CPU
 * clock (one event per online CPU, opened by user space: tracer/profile_sampler), which
 * works on VMs without a hardware PMU. Each sample of a traced thread carries its kernel
 * stack (when the clock interrupted the kernel) and its user stack (the sampled
 * instruction, then the frame-pointer walk), and goes to user space on a ring of its own,
 * and, in a process whose CPython layout user space stored (python_layouts), its Python
 * frames; user space symbolizes and counts them. Counting raw stacks in the kernel would save
 * little at 49-99 Hz and would lose the per-time-bucket counts and the Python frames. */
#include "common.bpf.h"
#include "python_stack.bpf.h"

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 22); /* sized by user space before load */
} profile_ring SEC(".maps");

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
  const __u64 id = bpf_get_current_pid_tgid();
  const __u32 tgid = id >> 32;
  const __u32 tid = (__u32)id;
  if (tid == 0) /* the idle task */
    return 0;
  if (!is_traced_tgid(tgid))
    return 0;
  const __u32 ring_id = IB_RING_PROFILE;
  __u64 *offered = bpf_map_lookup_elem(&ring_offered, &ring_id);
  if (offered)
    __sync_fetch_and_add(offered, 1);
  struct ib_profile_sample *s = bpf_ringbuf_reserve(&profile_ring, sizeof(*s), 0);
  if (!s) {
    count_loss(IB_RING_PROFILE);
    return 0;
  }
  s->ts_ns = bpf_ktime_get_ns();
  s->pid = tgid;
  s->tid = tid;
  s->cpu = bpf_get_smp_processor_id();
  s->py_count = ib_current_python_stack(s->py);
  /* Empty when the clock interrupted user code: the kernel walk starts from the sample's
   * registers only when they are the kernel's. */
  s->kstack_bytes = bpf_get_stack(ctx, s->kstack, sizeof(s->kstack), 0);
  /* From the thread's user registers even when the sample is in the kernel. */
  s->ustack_bytes = bpf_get_stack(ctx, s->ustack, sizeof(s->ustack), BPF_F_USER_STACK);
  /* No wakeup: the reader drains every ring on a short timer. */
  bpf_ringbuf_submit(s, BPF_RB_NO_WAKEUP);
  return 0;
}

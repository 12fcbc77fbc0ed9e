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
#include "stack_capture.bpf.h"

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
  struct ib_profile_sample *s = ib_stack_reserve(IB_RING_PROFILE, IB_STACK_CPU_SAMPLE);
  if (!s)
    return 0;
  s->ts_ns = bpf_ktime_get_ns();
  ib_stack_fill_submit(ctx, s, true);
  return 0;
}

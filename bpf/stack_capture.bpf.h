/* SPDX-License-Identifier: GPL-2.0 */
/* The one way a program takes the current thread's stack for user space: its user stack (the
 * instruction it is at, then the frame-pointer walk), its Python frames (python_stack.bpf.h, in a
 * process whose layout user space stored) and, where asked, its kernel stack, in a record on
 * profile_ring that user space symbolizes and interns (tracer/profile_aggregator.h). The CPU
 * samples (profile.bpf.c) and the stacks of stored slow calls (cuda.bpf.c) both take it. */
#ifndef INGERO_STACK_CAPTURE_BPF_H
#define INGERO_STACK_CAPTURE_BPF_H

#include "common.bpf.h"
#include "python_stack.bpf.h"

/* A record of the current thread on profile_ring, its header filled (times and op are the
 * caller's), or NULL with the loss counted against loss_source. */
static __always_inline struct ib_profile_sample *ib_stack_reserve(__u32 loss_source, __u16 kind)
{
  struct ib_profile_sample *s = bpf_ringbuf_reserve(&profile_ring, sizeof(*s), 0);
  if (!s) {
    count_loss(loss_source);
    return NULL;
  }
  const __u64 id = bpf_get_current_pid_tgid();
  s->pid = id >> 32;
  s->tid = (__u32)id;
  s->cpu = bpf_get_smp_processor_id();
  s->kind = kind;
  s->op = 0;
  s->pad = 0;
  return s;
}

/* Counts what a walk of Python frames came to, so that a run says how often and why they were missing. */
static __always_inline void ib_count_python_walk(int n, bool cut)
{
  __u32 outcome = n >= 0 ? (cut ? IB_PY_WALK_DEPTH_CUT : IB_PY_WALK_OK) : (__u32)(-n);
  __u64 *count = bpf_map_lookup_elem(&python_walks, &outcome);
  if (count)
    __sync_fetch_and_add(count, 1);
}

/* Fills the record's stacks from the program's context and submits it. */
static __always_inline void ib_stack_fill_submit(void *ctx, struct ib_profile_sample *s, bool kernel)
{
  bool cut;
  s->py_count = ib_current_python_stack(s->py, &cut);
  ib_count_python_walk(s->py_count, cut);
  /* Empty when the context is user code: the kernel walk starts from the context's registers
   * only when they are the kernel's. */
  s->kstack_bytes = kernel ? bpf_get_stack(ctx, s->kstack, sizeof(s->kstack), 0) : 0;
  /* From the thread's user registers even when the context is in the kernel. */
  s->ustack_bytes = bpf_get_stack(ctx, s->ustack, sizeof(s->ustack), BPF_F_USER_STACK);
  /* No wakeup: the reader drains every ring on a short timer. */
  bpf_ringbuf_submit(s, BPF_RB_NO_WAKEUP);
}

#endif /* INGERO_STACK_CAPTURE_BPF_H */

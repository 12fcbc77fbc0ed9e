/* SPDX-License-Identifier: GPL-2.0 */
/* Scheduler: per-thread on/off-CPU time, voluntary vs involuntary switches, run-queue
 * latency (runqlat's model: runnable -> running), streamed intervals above thresholds, and
 * which thread woke each blocked interval (an attached job's batch waits are the main
 * thread's blocked intervals that a loader worker or the pin thread ended). A blocked
 * interval slept in I/O wait (io_schedule: a read waiting for the disk, a page-cache miss)
 * is kept apart as offcpu_io. */
#include "common.bpf.h"

#define TASK_RUNNING 0

/* Kernels before 5.14 name the task state `state`. */
struct task_struct___pre_5_14 {
  long state;
} __attribute__((preserve_access_index));

static __always_inline long task_state(struct task_struct *t)
{
  if (bpf_core_field_exists(t->__state))
    return BPF_CORE_READ(t, __state);
  return BPF_CORE_READ((struct task_struct___pre_5_14 *)t, state);
}

/* io_schedule() sets in_iowait around the sleep of a task waiting for I/O. */
static __always_inline __u32 in_iowait(struct task_struct *t)
{
  if (!bpf_core_field_exists(t->in_iowait))
    return 0;
  return BPF_CORE_READ_BITFIELD(t, in_iowait);
}

static __always_inline struct ib_task_clock *clock_of(__u32 tid)
{
  static const struct ib_task_clock zero;
  return lookup_or_init(&task_clocks, &tid, &zero, IB_LOSS_TASK_CLOCKS);
}

/* The clock of a thread that is off the CPU (being woken, or switched in): a new clock starts
 * from the kernel's run time, which stands still while the thread does not run. */
static __always_inline struct ib_task_clock *clock_of_waiting(struct task_struct *t)
{
  struct ib_task_clock *c = clock_of(BPF_CORE_READ(t, pid));
  if (c && !c->exec_ns)
    c->exec_ns = BPF_CORE_READ(t, se.sum_exec_runtime);
  return c;
}

/* The slice a thread ran up to this switch out (or exit): its kernel run time since the last
 * one when known, else since its switch in was seen. Its run time becomes the clock's. */
static __always_inline __u64 slice_ending(struct task_struct *t, struct ib_task_clock *c, __u64 since, __u64 now)
{
  const __u64 exec = t->se.sum_exec_runtime;
  const __u64 slice = c->exec_ns && exec > c->exec_ns ? exec - c->exec_ns : since && now > since ? now - since : 0;
  c->exec_ns = exec;
  return slice;
}

static __always_inline void mark_runnable(struct task_struct *p)
{
  if (!is_traced_tgid(BPF_CORE_READ(p, tgid)))
    return;
  struct ib_task_clock *c = clock_of_waiting(p);
  if (c)
    c->runnable_since = bpf_ktime_get_ns();
}

/* sched_waking runs in the waker's context (sched_wakeup may run on the wakee's CPU), so the
 * current task is the thread that woke p; from an interrupt it is whatever ran there, and
 * the idle task (pid 0) is recorded as unknown. */
SEC("tp_btf/sched_waking")
int BPF_PROG(on_sched_waking, struct task_struct *p)
{
  if (!is_traced_tgid(BPF_CORE_READ(p, tgid)))
    return 0;
  struct ib_task_clock *c = clock_of_waiting(p);
  if (!c)
    return 0;
  __u64 id = bpf_get_current_pid_tgid();
  c->waker = (__u32)id ? IB_WAKER(id >> 32, (__u32)id) : 0;
  return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_sched_wakeup, struct task_struct *p)
{
  mark_runnable(p);
  return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_sched_wakeup_new, struct task_struct *p)
{
  mark_runnable(p);
  return 0;
}

/* Ends the thread's time off the CPU at `at`, when it began running: its sleep (or preemption) and
 * its wait on the run queue since its wake-up. */
static __always_inline void end_offcpu(struct ib_task_clock *c, struct ib_thread_stats *s, __u32 pid, __u32 tid,
                                       __u64 at)
{
  if (c->offcpu_since && at > c->offcpu_since) {
    __u64 dur = at - c->offcpu_since;
    __sync_fetch_and_add(&s->offcpu_ns, dur);
    stat_max(&s->offcpu_max_ns, dur);
    hist_add(pid, IB_HIST_OFFCPU_US, dur);
    if (c->offcpu_preempted)
      __sync_fetch_and_add(&s->preempted_ns, dur);
    if (c->offcpu_iowait) {
      __sync_fetch_and_add(&s->iowait_count, 1);
      __sync_fetch_and_add(&s->iowait_ns, dur);
    }
    if (dur >= (c->offcpu_iowait ? iowait_min_ns : offcpu_min_ns)) {
      const bool blocked = !c->offcpu_preempted;
      const __s64 waker = blocked ? c->waker : 0;
      const __u32 op = !blocked ? IB_OP_OFFCPU_PREEMPTED : c->offcpu_iowait ? IB_OP_OFFCPU_IO : IB_OP_OFFCPU_BLOCKED;
      emit_span(&sched_ring, IB_RING_SCHED, op, c->offcpu_since, dur, pid, tid, waker, waker ? IB_EVENT_HAS_ARG : 0);
    }
  }
  c->waker = 0;
  c->offcpu_iowait = 0;
  if (c->runnable_since && at > c->runnable_since) {
    __u64 dur = at - c->runnable_since;
    __sync_fetch_and_add(&s->runq_count, 1);
    __sync_fetch_and_add(&s->runq_ns, dur);
    hist_add(pid, IB_HIST_RUNQ_US, dur);
    if (dur >= runq_min_ns)
      emit_span(&sched_ring, IB_RING_SCHED, IB_OP_RUNQ_WAIT, c->runnable_since, dur, pid, tid, 0, 0);
  }
  c->offcpu_since = 0;
  c->runnable_since = 0;
}

static __always_inline void switch_out(struct task_struct *prev, bool preempted, __u64 now)
{
  __u32 tid = prev->pid;
  __u32 pid = prev->tgid;
  struct ib_task_clock *c = clock_of(tid);
  struct ib_thread_stats *s = stats_of(tid, pid);
  if (!c || !s)
    return;
  /* oncpu_since is cleared before the slice joins oncpu_ns: a reader copying the clock between
   * the two stores then misses the slice for a moment rather than counting it twice (which a
   * later reading would undo, making the time run backwards). */
  const __u64 since = c->oncpu_since;
  c->oncpu_since = 0;
  asm volatile("" ::: "memory");
  const __u64 slice = slice_ending(prev, c, since, now);
  __sync_fetch_and_add(&s->oncpu_ns, slice);
  c->oncpu_ns += slice;
  /* Still off the CPU by its clock: sched_switch did not report its switch in (Linux 6.18 left out
   * about 2 in 1,000 of a sleeping thread's). Its time off ended as the slice it just ran began,
   * and not before its wake-up. */
  if (c->offcpu_since) {
    const __u64 began = now - slice;
    end_offcpu(c, s, pid, tid, began > c->runnable_since ? began : c->runnable_since);
  }
  c->offcpu_since = now;
  c->offcpu_preempted = preempted;
  c->offcpu_iowait = preempted ? 0 : in_iowait(prev);
  if (preempted) {
    __sync_fetch_and_add(&s->involuntary_switches, 1);
    c->runnable_since = now; /* still on the run queue */
  } else {
    __sync_fetch_and_add(&s->voluntary_switches, 1);
    c->runnable_since = 0; /* sleeping until the next wakeup */
  }
}

static __always_inline void switch_in(struct task_struct *next, __u64 now)
{
  __u32 tid = next->pid;
  __u32 pid = next->tgid;
  struct ib_task_clock *c = clock_of_waiting(next);
  struct ib_thread_stats *s = stats_of(tid, pid);
  if (!c || !s)
    return;
  end_offcpu(c, s, pid, tid, now);
  c->oncpu_since = now;
}

/* The previous task's state is read through CO-RE rather than the tracepoint's
 * prev_state argument, which only exists from 5.18 on. */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
  __u64 now = bpf_ktime_get_ns();
  if (BPF_CORE_READ(prev, exit_state)) {
    /* Its last switch (exit_notify ran); its process may already have left the filter. Its
     * last slice still counts, so that its on-CPU time is whole once its clock is gone. */
    __u32 tid = prev->pid;
    struct ib_task_clock *c = bpf_map_lookup_elem(&task_clocks, &tid);
    struct ib_thread_stats *s = c ? bpf_map_lookup_elem(&thread_stats, &tid) : 0;
    if (s)
      __sync_fetch_and_add(&s->oncpu_ns, slice_ending(prev, c, c->oncpu_since, now));
    bpf_map_delete_elem(&task_clocks, &tid);
  } else if (prev->pid && is_traced_tgid(prev->tgid)) {
    switch_out(prev, preempt || task_state(prev) == TASK_RUNNING, now);
  }
  if (next->pid && is_traced_tgid(next->tgid))
    switch_in(next, now);
  return 0;
}

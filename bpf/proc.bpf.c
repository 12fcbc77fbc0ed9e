/* SPDX-License-Identifier: GPL-2.0 */
/* Process tree: fork enrolls children of traced processes in the kernel filter;
 * fork/exec/exit/rename events give user space the tree, names and lifetimes; the OOM
 * killer's choice and fatal signals sent to traced processes say how one died. */
#include "common.bpf.h"

/* An event about `task`, recorded as happening on thread tid of process pid. */
static __always_inline void emit_task_event(__u32 op, struct task_struct *task, __u32 pid, __u32 tid, __s64 arg,
                                            __s64 ret, __u16 flags)
{
  struct ib_event *e = reserve_event(&proc_ring, IB_RING_PROC);
  if (!e)
    return;
  e->ts_ns = bpf_ktime_get_ns();
  e->pid = pid;
  e->tid = tid;
  e->op = op;
  e->arg = arg;
  e->ret = ret;
  e->flags = flags;
  bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
  submit_event(&proc_ring, e);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
  __u32 parent_tgid = parent->tgid;
  if (!is_traced_tgid(parent_tgid))
    return 0;
  __u32 child_pid = child->pid;
  __u32 child_tgid = child->tgid;
  if (child_pid == child_tgid) {
    __u8 one = 1;
    if (in_traced_tree(parent_tgid) && bpf_map_update_elem(&tgid_filter, &child_pid, &one, BPF_ANY))
      count_loss(IB_LOSS_TGID_FILTER);
    /* On the parent, naming the child (comm is the child's). */
    emit_task_event(IB_OP_FORK, child, parent_tgid, parent->pid, child_pid, 0, IB_EVENT_HAS_ARG);
  } else {
    emit_task_event(IB_OP_THREAD_START, child, child_tgid, child_pid, 0, 0, 0);
  }
  return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
  if (!is_traced_tgid(p->tgid))
    return 0;
  emit_task_event(IB_OP_EXEC, p, p->tgid, p->pid, 0, 0, 0);
  return 0;
}

/* Every thread's exit; the process's last one says so through its group leader
 * having no live threads left, read through CO-RE (the tracepoint's group_dead
 * argument only exists on recent kernels). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
  __u32 tgid = p->tgid;
  if (!is_traced_tgid(tgid))
    return 0;
  bool group_dead = BPF_CORE_READ(p, signal, live.counter) == 0;
  /* exit_code is the wait status (code << 8 | signal); user space decodes it. */
  __s64 status = p->exit_code;
  emit_task_event(group_dead ? IB_OP_EXIT : IB_OP_THREAD_EXIT, p, tgid, p->pid, 0, status, IB_EVENT_HAS_RET);
  if (group_dead)
    bpf_map_delete_elem(&tgid_filter, &tgid);
  return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(on_rename, struct task_struct *task, const char *comm)
{
  if (!is_traced_tgid(task->tgid))
    return 0;
  struct ib_event *e = reserve_event(&proc_ring, IB_RING_PROC);
  if (!e)
    return 0;
  e->ts_ns = bpf_ktime_get_ns();
  e->pid = task->tgid;
  e->tid = task->pid;
  e->op = IB_OP_RENAME;
  bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), comm);
  submit_event(&proc_ring, e);
  return 0;
}

/* Kernels before 6.8 pass mark_victim the victim's pid alone: there, user space leaves
 * on_oom_victim unloaded and sets this, and a SIGKILL the kernel itself sends (SEND_SIG_PRIV: the
 * OOM killer's, to each process sharing the victim's memory; also a pid namespace's teardown) is
 * taken for the kill, from the allocating thread that invoked it. */
const volatile bool oom_from_kernel_sigkill = false;

/* The OOM killer chose a traced process (global or a cgroup's): pid/tid = the victim, arg = the
 * thread whose allocation invoked the killer (IB_WAKER). The kill itself follows as a SIGKILL
 * (fatal_signal). Linux 6.8 on; user space leaves it unloaded where the tracepoint's arguments
 * differ. */
SEC("tp_btf/mark_victim")
int BPF_PROG(on_oom_victim, struct task_struct *task, uid_t uid)
{
  __u32 tgid = task->tgid;
  if (!is_traced_tgid(tgid))
    return 0;
  __u64 current = bpf_get_current_pid_tgid();
  emit_task_event(IB_OP_OOM_KILL, task, tgid, task->pid, IB_WAKER(current >> 32, (__u32)current), 0,
                  IB_EVENT_HAS_ARG);
  return 0;
}

/* Signals whose default action ends the process with a core or a kill. SIGTERM and SIGINT are
 * how jobs and loaders stop workers on purpose: not recorded. */
static __always_inline bool is_fatal_signal(int sig)
{
  return sig == 4 /* SIGILL */ || sig == 6 /* SIGABRT */ || sig == 7 /* SIGBUS */ || sig == 8 /* SIGFPE */ ||
         sig == 9 /* SIGKILL */ || sig == 11 /* SIGSEGV */ || sig == 31 /* SIGSYS */;
}

/* A fatal signal sent to a traced thread: pid/tid = the target, arg = the signal, ret = its si_code
 * (SI_KERNEL for the OOM killer's SIGKILL, BUS_ADRERR for a write past a full tmpfs), stream =
 * IB_WAKER of the sending thread (the target itself for a fault). */
SEC("tp_btf/signal_generate")
int BPF_PROG(on_signal_generate, int sig, struct kernel_siginfo *info, struct task_struct *task, int group,
             int result)
{
  if (!is_fatal_signal(sig))
    return 0;
  __u32 tgid = task->tgid;
  if (!is_traced_tgid(tgid))
    return 0;
  /* SEND_SIG_NOINFO (0) is a signal from user space, SEND_SIG_PRIV (1) one from the kernel. */
  const bool from_kernel = (unsigned long)info == 1;
  __s32 code = 0;
  if (from_kernel)
    code = 0x80; /* SI_KERNEL */
  else if (info)
    code = BPF_CORE_READ(info, si_code);
  __u64 current = bpf_get_current_pid_tgid();
  __u64 sender = (__u64)IB_WAKER(current >> 32, (__u32)current);
  if (oom_from_kernel_sigkill && sig == 9 && from_kernel)
    emit_task_event(IB_OP_OOM_KILL, task, tgid, task->pid, sender, 0, IB_EVENT_HAS_ARG);
  struct ib_event *e = reserve_event(&proc_ring, IB_RING_PROC);
  if (!e)
    return 0;
  e->ts_ns = bpf_ktime_get_ns();
  e->pid = tgid;
  e->tid = task->pid;
  e->op = IB_OP_FATAL_SIGNAL;
  e->arg = sig;
  e->ret = code;
  e->stream = sender;
  e->flags = IB_EVENT_HAS_ARG | IB_EVENT_HAS_RET | IB_EVENT_HAS_STREAM;
  bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
  submit_event(&proc_ring, e);
  return 0;
}

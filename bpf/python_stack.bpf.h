/* SPDX-License-Identifier: GPL-2.0 */
/* The Python frames of the current thread, read in the kernel from CPython's own structures
 * (no frame pointers needed), with the per-process layout that user space found
 * (tracer/cpython_layout.h: find_python_runtime) and stored in python_layouts. The walk is the
 * one walk_python_stack() does in user space, step for step; user space turns each frame's code
 * object and instruction into a name, a file and a line (PythonCodeReader).
 *
 * Use, in a program of the linked object (e.g. a perf_event program):
 *   struct ib_python_frame *frames = <IB_PY_MAX_FRAMES entries in a map value or ring record>;
 *   bool cut;
 *   int n = ib_current_python_stack(frames, &cut);  // n >= 0 frames, innermost first; < 0: enum ib_py_error;
 *                                                   // cut: frames were left (IB_PY_MAX_FRAMES, IB_PY_MAX_WALK)
 * The current thread must be a thread of the sampled process (perf_event, uprobe, tracepoint of the
 * task itself), not another. */
#ifndef INGERO_PYTHON_STACK_BPF_H
#define INGERO_PYTHON_STACK_BPF_H

#include "common.bpf.h"

_Static_assert((IB_PY_MAX_FRAMES & (IB_PY_MAX_FRAMES - 1)) == 0, "frames[] is indexed through a mask");

static __always_inline int ib_py_read_ptr(__u64 addr, __u64 *out)
{
  return bpf_probe_read_user(out, sizeof(*out), (const void *)addr);
}

/* The state of a walk, shared with its bpf_loop() steps: each step is verified once, where a
 * bounded loop's branches (one per layout field the versions differ in) multiplied per iteration
 * past the verifier's limit. */
struct ib_py_walk {
  const struct ib_python_layout *l;
  struct ib_python_frame *frames;
  __u64 at;  /* the thread state being compared, then the frame being visited; 0 at the end */
  __u64 tstate;
  __u32 tid;
  int n;     /* frames written, or a negative ib_py_error */
};

/* One thread state of the list: compares its id with the wanted tid. */
static long ib_py_thread_step(__u64 index, void *ctx)
{
  struct ib_py_walk *w = ctx;
  const struct ib_python_layout *l = w->l;
  __u64 tstate = w->at, id = 0;
  if (!tstate)
    return 1;
  if (l->thread_match == IB_PY_MATCH_NATIVE_TID) {
    if (ib_py_read_ptr(tstate + l->tstate_native_thread_id, &id))
      goto unreadable;
  } else {
    __u64 pthread = 0;
    __s32 pthread_tid = 0;
    if (ib_py_read_ptr(tstate + l->tstate_thread_id, &pthread))
      goto unreadable;
    if (pthread && !bpf_probe_read_user(&pthread_tid, sizeof(pthread_tid), (const void *)(pthread + l->pthread_tid)))
      id = (__u32)pthread_tid;
  }
  if (id == w->tid) {
    w->tstate = tstate;
    return 1;
  }
  if (ib_py_read_ptr(tstate + l->tstate_next, &w->at))
    goto unreadable;
  return 0;
unreadable:
  w->n = IB_PY_ERR_READ;
  return 1;
}

/* The thread state of native thread w->tid into w->tstate (0 when the thread has none), or
 * w->n < 0. Compares the thread list's ids, never takes the GIL holder (a thread running native
 * code without the GIL would get the holder's frames). The tid is the thread's id in the
 * process's own pid namespace, which is what CPython stores. */
static __always_inline void ib_python_thread_state(struct ib_py_walk *w)
{
  const struct ib_python_layout *l = w->l;
  __u64 interp = 0;
  if (ib_py_read_ptr(l->runtime_addr + l->runtime_interp_head, &interp)) {
    w->n = IB_PY_ERR_READ;
    return;
  }
  if (!interp)
    return;
  if (ib_py_read_ptr(interp + l->interp_threads_head, &w->at)) {
    w->n = IB_PY_ERR_READ;
    return;
  }
  bpf_loop(IB_PY_MAX_THREADS, ib_py_thread_step, w, 0);
}

/* One frame: kept unless it is a C-stack shim frame; its code object must be a code object. */
static long ib_py_frame_step(__u64 index, void *ctx)
{
  struct ib_py_walk *w = ctx;
  const struct ib_python_layout *l = w->l;
  __u64 frame = w->at, previous = 0, code = 0, instr = 0, type = 0;
  __u8 owner = 0;
  if (!frame || w->n < 0 || w->n >= IB_PY_MAX_FRAMES)
    return 1;
  if (ib_py_read_ptr(frame + l->frame_previous, &previous) || ib_py_read_ptr(frame + l->frame_code, &code))
    goto unreadable;
  if (l->frame_owner != IB_PY_NO_FIELD &&
      bpf_probe_read_user(&owner, sizeof(owner), (const void *)(frame + l->frame_owner)))
    goto unreadable;
  w->at = previous;
  if (l->owner_cstack != IB_PY_NO_FIELD && owner == l->owner_cstack)
    return 0;
  if (ib_py_read_ptr(code + l->object_type, &type))
    goto unreadable;
  if (type != l->code_type_addr) {
    w->n = IB_PY_ERR_NOT_CODE;
    return 1;
  }
  if (l->frame_instr_is_lasti) {
    __s32 lasti = 0;
    if (bpf_probe_read_user(&lasti, sizeof(lasti), (const void *)(frame + l->frame_instr)))
      goto unreadable;
    instr = (__u64)(__s64)lasti;
  } else if (ib_py_read_ptr(frame + l->frame_instr, &instr)) {
    goto unreadable;
  }
  struct ib_python_frame *out = &w->frames[w->n & (IB_PY_MAX_FRAMES - 1)];
  out->code = code;
  out->instr = instr;
  w->n++;
  return 0;
unreadable:
  w->n = IB_PY_ERR_READ;
  return 1;
}

/* Thread `tid`'s Python frames into frames[0 .. IB_PY_MAX_FRAMES), innermost first, C-stack shim
 * frames (3.12+) skipped, at most IB_PY_MAX_WALK frames visited: the number written, or a negative
 * ib_py_error (and no frames to use). Needs bpf_loop (Linux 5.17+). */
static __always_inline int ib_read_python_stack(const struct ib_python_layout *l, __u32 tid,
                                                struct ib_python_frame *frames, bool *cut)
{
  *cut = false;
  struct ib_py_walk w = {.l = l, .frames = frames, .tid = tid};
  ib_python_thread_state(&w);
  if (w.n < 0)
    return w.n;
  if (!w.tstate)
    return IB_PY_ERR_NO_THREAD;
  __u64 holder = w.tstate;
  w.at = 0;
  if (l->tstate_cframe != IB_PY_NO_FIELD && ib_py_read_ptr(holder + l->tstate_cframe, &holder))
    return IB_PY_ERR_READ;
  if (holder && ib_py_read_ptr(holder + l->cframe_current_frame, &w.at))
    return IB_PY_ERR_READ;
  bpf_loop(IB_PY_MAX_WALK, ib_py_frame_step, &w, 0);
  *cut = w.n >= 0 && w.at != 0; /* a frame was left unvisited */
  return w.n;
}

/* The current thread's Python frames, with its process's layout from python_layouts:
 * IB_PY_ERR_NO_LAYOUT for a process without one (not Python, or its layout was not found). The
 * thread is named as its process's pid namespace numbers it (a container's differ). */
static __always_inline int ib_current_python_stack(struct ib_python_frame *frames, bool *cut)
{
  *cut = false;
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32;
  const struct ib_python_layout *l = bpf_map_lookup_elem(&python_layouts, &tgid);
  if (!l)
    return IB_PY_ERR_NO_LAYOUT;
  __u32 tid = (__u32)id;
  if (l->pidns_ino) {
    struct bpf_pidns_info ns = {};
    if (bpf_get_ns_current_pid_tgid(l->pidns_dev, l->pidns_ino, &ns, sizeof(ns)))
      return IB_PY_ERR_NO_THREAD;
    tid = ns.pid;
  }
  return ib_read_python_stack(l, tid, frames, cut);
}

#endif /* INGERO_PYTHON_STACK_BPF_H */

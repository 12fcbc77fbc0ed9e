/* SPDX-License-Identifier: GPL-2.0 OR Apache-2.0 */
/* Event records, op codes and map layouts shared by the BPF programs (bpf/NAME.bpf.c)
 * and user space (tracer/, and through common/trace_contract.h every reader). Plain C,
 * kernel fixed-width types only: the BPF side gets them from vmlinux.h, user space
 * from <linux/types.h>. */
#ifndef INGERO_BPF_EVENTS_H
#define INGERO_BPF_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Every op the trace DB can hold: X(enum name, ops.name, ops.category). Codes are
 * positions in this list and are stored in trace DBs: APPEND ONLY from schema
 * version 2 on (never reorder, rename or remove an entry). */
#define IB_OPS(X)                                                          \
  X(IB_OP_NONE, "none", "internal")                                        \
  X(IB_OP_CUDA_MALLOC, "cudaMalloc", "cuda_runtime")                       \
  X(IB_OP_CUDA_FREE, "cudaFree", "cuda_runtime")                           \
  X(IB_OP_CUDA_MALLOC_HOST, "cudaMallocHost", "cuda_runtime")              \
  X(IB_OP_CUDA_HOST_ALLOC, "cudaHostAlloc", "cuda_runtime")                \
  X(IB_OP_CUDA_FREE_HOST, "cudaFreeHost", "cuda_runtime")                  \
  X(IB_OP_CUDA_HOST_REGISTER, "cudaHostRegister", "cuda_runtime")          \
  X(IB_OP_CUDA_MEMCPY, "cudaMemcpy", "cuda_runtime")                       \
  X(IB_OP_CUDA_MEMCPY_ASYNC, "cudaMemcpyAsync", "cuda_runtime")            \
  X(IB_OP_CUDA_MEMSET_ASYNC, "cudaMemsetAsync", "cuda_runtime")            \
  X(IB_OP_CUDA_LAUNCH_KERNEL, "cudaLaunchKernel", "cuda_runtime")          \
  X(IB_OP_CUDA_STREAM_SYNC, "cudaStreamSynchronize", "cuda_runtime")       \
  X(IB_OP_CUDA_DEVICE_SYNC, "cudaDeviceSynchronize", "cuda_runtime")       \
  X(IB_OP_CUDA_EVENT_SYNC, "cudaEventSynchronize", "cuda_runtime")         \
  X(IB_OP_CUDA_STREAM_WAIT_EVENT, "cudaStreamWaitEvent", "cuda_runtime")   \
  X(IB_OP_CUDA_LAUNCH_KERNEL_EXC, "cudaLaunchKernelExC", "cuda_runtime")   \
  X(IB_OP_CUDA_GRAPH_LAUNCH, "cudaGraphLaunch", "cuda_runtime")            \
  X(IB_OP_CUDA_EVENT_RECORD, "cudaEventRecord", "cuda_runtime")            \
  X(IB_OP_CUDA_EVENT_QUERY, "cudaEventQuery", "cuda_runtime")              \
  X(IB_OP_CUDA_MEMCPY_2D_ASYNC, "cudaMemcpy2DAsync", "cuda_runtime")       \
  X(IB_OP_CUDA_MEMCPY_PEER_ASYNC, "cudaMemcpyPeerAsync", "cuda_runtime")   \
  X(IB_OP_CU_LAUNCH_KERNEL, "cuLaunchKernel", "cuda_driver")               \
  X(IB_OP_CU_LAUNCH_KERNEL_EX, "cuLaunchKernelEx", "cuda_driver")          \
  X(IB_OP_CU_GRAPH_LAUNCH, "cuGraphLaunch", "cuda_driver")                 \
  X(IB_OP_CU_MEM_ALLOC, "cuMemAlloc_v2", "cuda_driver")                    \
  X(IB_OP_CU_MEM_FREE, "cuMemFree_v2", "cuda_driver")                      \
  X(IB_OP_CU_MEM_HOST_ALLOC, "cuMemHostAlloc", "cuda_driver")              \
  X(IB_OP_CU_MEMCPY_HTOD_ASYNC, "cuMemcpyHtoDAsync_v2", "cuda_driver")     \
  X(IB_OP_CU_MEMCPY_DTOH_ASYNC, "cuMemcpyDtoHAsync_v2", "cuda_driver")     \
  X(IB_OP_CU_MEMCPY_ASYNC, "cuMemcpyAsync", "cuda_driver")                 \
  X(IB_OP_CU_STREAM_SYNC, "cuStreamSynchronize", "cuda_driver")            \
  X(IB_OP_CU_CTX_SYNC, "cuCtxSynchronize", "cuda_driver")                  \
  X(IB_OP_CU_EVENT_RECORD, "cuEventRecord", "cuda_driver")                 \
  X(IB_OP_CU_EVENT_QUERY, "cuEventQuery", "cuda_driver")                   \
  X(IB_OP_CU_EVENT_SYNC, "cuEventSynchronize", "cuda_driver")              \
  X(IB_OP_NCCL_ALL_REDUCE, "ncclAllReduce", "nccl")                        \
  X(IB_OP_NCCL_BROADCAST, "ncclBroadcast", "nccl")                         \
  X(IB_OP_NCCL_REDUCE, "ncclReduce", "nccl")                               \
  X(IB_OP_NCCL_ALL_GATHER, "ncclAllGather", "nccl")                        \
  X(IB_OP_NCCL_REDUCE_SCATTER, "ncclReduceScatter", "nccl")                \
  X(IB_OP_NCCL_SEND, "ncclSend", "nccl")                                   \
  X(IB_OP_NCCL_RECV, "ncclRecv", "nccl")                                   \
  X(IB_OP_NCCL_GROUP_START, "ncclGroupStart", "nccl")                      \
  X(IB_OP_NCCL_GROUP_END, "ncclGroupEnd", "nccl")                          \
  X(IB_OP_OFFCPU_PREEMPTED, "offcpu_preempted", "sched")                   \
  X(IB_OP_OFFCPU_BLOCKED, "offcpu_blocked", "sched")                       \
  X(IB_OP_RUNQ_WAIT, "runq_wait", "sched")                                 \
  X(IB_OP_PAGE_FAULTS, "page_faults", "mm")                                \
  X(IB_OP_PAGE_ALLOCS, "page_allocs", "mm")                                \
  X(IB_OP_BLOCK_IO, "block_io", "io")                                      \
  X(IB_OP_FORK, "fork", "process")                                         \
  X(IB_OP_EXEC, "exec", "process")                                         \
  X(IB_OP_EXIT, "exit", "process")                                         \
  X(IB_OP_THREAD_START, "thread_start", "process")                         \
  X(IB_OP_THREAD_EXIT, "thread_exit", "process")                           \
  X(IB_OP_RENAME, "rename", "process")                                     \
  X(IB_OP_BATCH_WAIT, "batch_wait", "workload")                            \
  X(IB_OP_BATCH_COMPUTE, "batch_compute", "workload")                      \
  X(IB_OP_WORKER_START, "worker_start", "workload")                        \
  X(IB_OP_OFFCPU_IO, "offcpu_io", "sched")                                 \
  X(IB_OP_OOM_KILL, "oom_kill", "process")                                 \
  X(IB_OP_FATAL_SIGNAL, "fatal_signal", "process")                         \
  X(IB_OP_HANG, "hang", "process")

#define IB_OP_ENUM_ENTRY(id, name, category) id,
enum ib_op { IB_OPS(IB_OP_ENUM_ENTRY) IB_OP_COUNT };
#undef IB_OP_ENUM_ENTRY

/* Ring buffers; each failed reservation is counted in losses[ring]. */
enum ib_ring { IB_RING_CUDA, IB_RING_SCHED, IB_RING_PROC, IB_RING_PROFILE, IB_RING_COUNT };

/* Losses that are not ring reservations: an in-kernel map that was full. */
enum ib_map_loss {
  IB_LOSS_THREAD_STATS = IB_RING_COUNT,
  IB_LOSS_TASK_CLOCKS,
  IB_LOSS_HISTOGRAMS,
  IB_LOSS_CALL_STATS,
  IB_LOSS_MEM_BURSTS,
  IB_LOSS_TGID_FILTER,
  IB_LOSS_IO_INFLIGHT,
  IB_LOSS_EVENT_STACKS, /* a stored event's stack that profile_ring had no room for */
  IB_LOSS_COUNT
};
/* Names of the loss sources, in enum order (losses.source in the trace DB). */
#define IB_LOSS_NAMES                                                                       \
  { "cuda", "sched", "proc", "profile", "thread_stats", "task_clocks", "histograms", \
    "call_stats", "mem_bursts", "tgid_filter", "io_inflight", "event_stacks" }

/* One record on any ring. ts_ns is the start of the call or interval. */
struct ib_event {
  __u64 ts_ns;
  __u64 dur_ns;
  __u32 pid;   /* tgid */
  __u32 tid;
  __u16 op;    /* enum ib_op */
  __u16 flags; /* IB_EVENT_HAS_* */
  __u32 pad;
  __s64 ret;
  __u64 bytes;
  __s64 arg;
  __u64 stream;
  char comm[16];
};
#define IB_EVENT_HAS_RET (1u << 0)
#define IB_EVENT_HAS_BYTES (1u << 1)
#define IB_EVENT_HAS_ARG (1u << 2)
#define IB_EVENT_HAS_STREAM (1u << 3)

/* The thread that woke a blocked interval (offcpu_blocked.arg): its process in the high
 * 32 bits, itself in the low 32. */
#define IB_WAKER(tgid, tid) ((__s64)(((__u64)(tgid) << 32) | (__u32)(tid)))
#define IB_WAKER_TGID(arg) ((__u32)((__u64)(arg) >> 32))
#define IB_WAKER_TID(arg) ((__u32)((__u64)(arg) & 0xffffffffu))

/* Where a CUDA/NCCL probe finds a value at function entry, packed in the attach cookie:
 * 0 = not recorded, 1..6 = integer argument register 1..6 (x86-64 SysV),
 * IB_ARG_STACK + n = n-th 8-byte slot above the return address (7th argument on). */
#define IB_ARG_NONE 0
#define IB_ARG_STACK 8
/* cookie = op | bytes_src << 16 | arg_src << 24 | stream_src << 32 | flags << 40 */
#define IB_COOKIE_OP(c) ((__u32)((c) & 0xffff))
#define IB_COOKIE_BYTES_SRC(c) ((__u32)(((c) >> 16) & 0xff))
#define IB_COOKIE_ARG_SRC(c) ((__u32)(((c) >> 24) & 0xff))
#define IB_COOKIE_STREAM_SRC(c) ((__u32)(((c) >> 32) & 0xff))
#define IB_COOKIE_FLAGS(c) ((__u32)(((c) >> 40) & 0xff))
/* A hot call (kernel launches): counted and histogrammed in the kernel; streamed to
 * user space only when it lasts at least call_stream_min_ns. */
#define IB_CALL_HOT (1u << 0)
/* No return probe: the call is counted at entry, its latency is not measured. */
#define IB_CALL_ENTRY_ONLY (1u << 1)
/* The bytes argument counts elements of the NCCL datatype held in the arg source. */
#define IB_CALL_NCCL_ELEMENTS (1u << 2)
/* Attached for one process (duty cycling): counts only once scoped_ops[op] is set. */
#define IB_CALL_SCOPED (1u << 3)

/* Transient per-thread timestamps between scheduler events (task_clocks, by tid). oncpu_ns is
 * thread_stats' total beside oncpu_since, so that one lookup gives user space a running thread's
 * on-CPU time so far (oncpu_ns + now - oncpu_since) however often it switches. */
struct ib_task_clock {
  __u64 oncpu_ns;    /* its slices up to its last switch out */
  __u64 oncpu_since; /* 0: off the CPU (or its switch in was not seen) */
  /* The kernel's run time of the thread (se.sum_exec_runtime) at its last switch out, or when
   * first seen off the CPU; 0 unknown. A slice is the run time between two switches out, so a
   * switch in that sched_switch never reported (seen on Linux 6.18) loses no time. */
  __u64 exec_ns;
  __u64 offcpu_since;
  __u64 runnable_since;
  __u32 offcpu_preempted;
  __u32 offcpu_iowait; /* the sleep was an I/O wait */
  __s64 waker; /* IB_WAKER(tgid, tid) of the wakeup that ended the sleep; 0 when unknown */
};

/* Exact per-thread totals (thread_stats table). */
struct ib_thread_stats {
  __u32 pid;
  __u32 pad;
  __u64 voluntary_switches;
  __u64 involuntary_switches;
  __u64 oncpu_ns;
  __u64 offcpu_ns;
  __u64 offcpu_max_ns;
  __u64 runq_count;
  __u64 runq_ns;
  __u64 page_allocs;
  __u64 page_alloc_bytes;
  __u64 page_faults;
  __u64 io_count;
  __u64 io_bytes;
  __u64 io_ns;
  __u64 iowait_count;      /* blocked intervals slept in I/O wait (the task's in_iowait) */
  __u64 iowait_ns;
  __u64 cache_pages_added; /* pages this thread's reads brought into the page cache */
  __u64 preempted_ns;      /* of offcpu_ns: switched out while runnable (a live view's split) */
  __u64 page_faults_cow;   /* of page_faults: copy-on-write (a live view's; the DB has the bursts' bytes) */
};

/* log2 histograms in microseconds (histograms table), one per (pid, metric). */
enum ib_hist_metric { IB_HIST_RUNQ_US, IB_HIST_OFFCPU_US, IB_HIST_IO_US, IB_HIST_COUNT };
#define IB_HIST_METRIC_NAMES { "runq_us", "offcpu_us", "io_us" }
#define IB_HIST_SLOTS 32
struct ib_hist_key {
  __u32 pid;
  __u32 metric;
};
struct ib_hist {
  __u64 slots[IB_HIST_SLOTS];
};

/* Exact per-thread, per-function call totals (call_stats table). */
struct ib_call_key {
  __u32 tid;
  __u32 op;
};
struct ib_call_stats {
  __u32 pid;
  __u32 pad;
  __u64 calls;     /* entered the function (counted at entry) */
  __u64 returns;   /* returned while probed: total_ns and the histogram cover these */
  __u64 errors;    /* returned non-zero */
  __u64 total_ns;
  __u64 max_ns;
  __u64 bytes;
  __u64 streamed;  /* also delivered as individual events */
  /* Probed calls that could not be timed: an entry whose return was not seen (the next entry
   * found it still open), a return without its entry (none, or another call's: another stack
   * depth), or a call that a duty cycle's edge overlapped (call_edges). Left out of returns,
   * total_ns, the histogram and the events. */
  __u64 cut;
};
/* A thread's totals for one function and the call it is inside now, in one map entry
 * so that a probed call's entry and return each touch a single entry (a separate
 * in-flight map cost an insert and a delete per call). User space reads .stats. */
struct ib_call_slot {
  struct ib_call_stats stats;
  __u64 start_ns; /* entry time of the call in progress; 0 when none */
  __u64 entry_sp; /* its stack pointer at entry: its return is the one whose stack is back there */
  __u64 bytes;
  __s64 arg;
  __u64 stream;
  __u32 flags;
  __u32 pad;
  __u64 edges; /* call_edges[op] at entry (cuda.bpf.c) */
};
/* log2 nanosecond latency histograms per (pid, op) (call_histograms table). */
#define IB_CALL_HIST_SLOTS 40
struct ib_call_hist_key {
  __u32 pid;
  __u32 op;
};
struct ib_call_hist {
  __u64 slots[IB_CALL_HIST_SLOTS];
};

/* A thread's page faults and page allocations not yet reported as a burst event
 * (page_faults / page_allocs; when one closes: mem.bpf.c), and its exact page counters
 * since tracing began: kept here so that a page event costs one map lookup after the
 * filter, and added to its ib_thread_stats when it exits or when tracing stops. */
#define IB_PAGE_BYTES 4096 /* a base page: what one fault copies, an order-0 allocation holds */
struct ib_mem_burst {
  __u32 pid;
  __u32 pad;
  __u64 fault_start_ns;
  __u64 fault_last_ns;
  __u64 faults;
  __u64 fault_cow; /* of the burst's faults, writes to present write-protected pages: copy-on-write */
  __u64 alloc_start_ns;
  __u64 alloc_last_ns;
  __u64 allocs;
  __u64 alloc_bytes;
  __u64 page_faults;
  __u64 page_faults_cow;
  __u64 page_allocs;
  __u64 page_alloc_bytes;
};

/* ---- CPython frames (bpf/python_stack.bpf.h walks them in the kernel, tracer/cpython_layout.h
 * finds the layout per process and walks the same way in user space). All offsets are bytes. ---- */
#define IB_PY_MAX_FRAMES 32  /* Python frames kept per stack, innermost first */
#define IB_PY_MAX_WALK 48    /* frames visited per stack, C-stack shim frames (3.12+) included */
#define IB_PY_MAX_THREADS 64 /* thread states compared when looking for the sampled thread */
#define IB_PY_NO_FIELD 0xffffffffu /* an offset this CPython version lacks */
/* How a thread state names its native thread: 3.11+ store gettid() (native_thread_id); 3.10 only
 * pthread_self(), whose glibc struct pthread holds the tid at pthread_tid. */
enum ib_py_thread_match { IB_PY_MATCH_NATIVE_TID = 0, IB_PY_MATCH_PTHREAD_TID = 1 };
/* One process's interpreter (python_layouts map, by tgid). */
struct ib_python_layout {
  __u32 version_hex;    /* Py_Version (PY_VERSION_HEX), e.g. 0x030b02f0 for 3.11.2 */
  __u32 thread_match;   /* enum ib_py_thread_match */
  __u64 runtime_addr;   /* &_PyRuntime in the process */
  __u64 code_type_addr; /* &PyCode_Type: every frame's code object has it as ob_type */
  /* The process's pid namespace (st_dev, st_ino of /proc/PID/ns/pid): CPython stores thread ids
   * as that namespace numbers them, and in a container they differ from the kernel's. */
  __u64 pidns_dev;
  __u64 pidns_ino;
  __u32 runtime_interp_head; /* _PyRuntimeState.interpreters.head: only that interpreter is walked
                              * (the main one, unless the process made subinterpreters) */
  __u32 interp_threads_head; /* PyInterpreterState: first PyThreadState */
  __u32 tstate_next;
  __u32 tstate_native_thread_id; /* unsigned long gettid() (3.11+) */
  __u32 tstate_thread_id;        /* unsigned long pthread_self() */
  __u32 pthread_tid;             /* pid_t tid in glibc's struct pthread (3.10) */
  /* The current frame: tstate->cframe->current_frame (3.11, 3.12: tstate_cframe and
   * cframe_current_frame), tstate->current_frame (3.13) or tstate->frame (3.10): tstate_cframe is
   * IB_PY_NO_FIELD and cframe_current_frame is then the offset in the thread state. */
  __u32 tstate_cframe;
  __u32 cframe_current_frame;
  /* _PyInterpreterFrame (3.11+) or PyFrameObject (3.10). */
  __u32 frame_previous;  /* previous / f_back */
  __u32 frame_code;      /* f_code / f_executable */
  __u32 frame_instr;     /* prev_instr / instr_ptr (a pointer), or the int f_lasti (3.10) */
  __u32 frame_instr_is_lasti; /* 1: frame_instr is the 32-bit f_lasti in code units (3.10) */
  __u32 frame_owner;     /* char owner; IB_PY_NO_FIELD before 3.11 */
  __u32 owner_cstack;    /* owner of C-stack shim frames that hold no code (3.12+), else IB_PY_NO_FIELD */
  __u32 object_type;     /* PyObject.ob_type */
  __u32 var_size;        /* PyVarObject.ob_size */
  /* Read in user space only (tracer/cpython_layout.h), never in the kernel. */
  __u32 code_name;       /* co_qualname from 3.11, co_name before */
  __u32 code_filename;
  __u32 code_firstlineno;
  __u32 code_linetable;  /* bytes: 3.10 line table or 3.11+ location table */
  __u32 code_adaptive;   /* co_code_adaptive: the instructions prev_instr points into (3.11+) */
  __u32 bytes_data;      /* PyBytesObject.ob_sval */
  __u32 str_length;      /* PyASCIIObject.length (code points) */
  __u32 str_state;       /* PyASCIIObject.state: kind bits 2-4, compact bit 5, ascii bit 6 */
  __u32 str_ascii_data;  /* sizeof(PyASCIIObject): where a compact ASCII string's bytes start */
  __u32 str_compact_data; /* sizeof(PyCompactUnicodeObject): other compact strings */
};
/* Why a thread's Python frames could not be read (negative returns of bpf/python_stack.bpf.h). */
enum ib_py_error {
  IB_PY_ERR_NO_LAYOUT = -1, /* the process has no layout in python_layouts */
  IB_PY_ERR_NO_THREAD = -2, /* the thread has no Python thread state */
  IB_PY_ERR_READ = -3,      /* a read of the process's memory failed (e.g. paged out) */
  IB_PY_ERR_NOT_CODE = -4,  /* a frame's code object is not a code object: no frames, never wrong ones */
};
/* What each kernel walk of Python frames came to (python_walks map, per CPU; stack_capture.bpf.h):
 * read whole, or why not (the negative enum ib_py_error in order), or read but cut at IB_PY_MAX_FRAMES
 * kept or IB_PY_MAX_WALK visited. */
enum ib_py_walk_outcome {
  IB_PY_WALK_OK = 0,
  IB_PY_WALK_NO_LAYOUT = 1, /* = -IB_PY_ERR_NO_LAYOUT, and so on */
  IB_PY_WALK_NO_THREAD = 2,
  IB_PY_WALK_READ_FAULT = 3,
  IB_PY_WALK_NOT_CODE = 4,
  IB_PY_WALK_DEPTH_CUT = 5,
  IB_PY_WALK_COUNT
};
#define IB_PY_WALK_NAMES { "ok", "no_layout", "no_thread", "read_fault", "not_code", "depth_cut" }
/* One Python frame of a sample: the code object, and the frame's instruction pointer (3.11+) or
 * f_lasti (3.10), which user space turns into the line executing. */
struct ib_python_frame {
  __u64 code;
  __u64 instr;
};

/* CPU profiles (profile.bpf.c): one record per on-CPU sample of a traced thread, on
 * profile_ring (bpf/stack_capture.bpf.h fills its stacks). Stacks are listed innermost first, as
 * bpf_get_stack gives them; a length
 * is in bytes (8 per frame), or a negative errno where the walk failed. */
#define IB_PROFILE_KSTACK_DEPTH 48
#define IB_PROFILE_USTACK_DEPTH 96
/* What a record on profile_ring is: an on-CPU sample, or the stack that made a stored event
 * (cuda.bpf.c, at a stored call's return: ts_ns and op are the event's, no kernel stack). */
enum ib_stack_kind { IB_STACK_CPU_SAMPLE = 0, IB_STACK_EVENT = 1 };
struct ib_profile_sample {
  __u64 ts_ns;
  __u32 pid; /* tgid */
  __u32 tid;
  __s32 kstack_bytes;
  __s32 ustack_bytes;
  __s32 py_count; /* frames in py, innermost first, or a negative enum ib_py_error */
  __u32 cpu;
  __u16 kind; /* enum ib_stack_kind */
  __u16 op;   /* IB_STACK_EVENT: the event's enum ib_op */
  __u32 pad;
  __u64 kstack[IB_PROFILE_KSTACK_DEPTH];
  __u64 ustack[IB_PROFILE_USTACK_DEPTH];
  struct ib_python_frame py[IB_PY_MAX_FRAMES];
};

#endif /* INGERO_BPF_EVENTS_H */

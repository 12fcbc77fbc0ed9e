/* Event records and op codes shared by the BPF programs (bpf/NAME.bpf.c) and the
 * user-space decoder (tracer/). Plain C, kernel fixed-width types only: the BPF
 * side gets them from vmlinux.h, user space from <linux/types.h>. */
#ifndef INGERO_BPF_EVENTS_H
#define INGERO_BPF_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Every op the tracer can emit: X(enum name, ops.name, ops.category).
 * Codes are positions in this list; the writer fills the ops table from it. */
#define IB_OPS(X)                                                  \
  X(IB_OP_NONE, "none", "internal")                                \
  X(IB_OP_CUDA_MALLOC, "cudaMalloc", "cuda_runtime")               \
  X(IB_OP_CUDA_FREE, "cudaFree", "cuda_runtime")                   \
  X(IB_OP_CUDA_MALLOC_HOST, "cudaMallocHost", "cuda_runtime")      \
  X(IB_OP_CUDA_HOST_ALLOC, "cudaHostAlloc", "cuda_runtime")        \
  X(IB_OP_CUDA_FREE_HOST, "cudaFreeHost", "cuda_runtime")          \
  X(IB_OP_CUDA_HOST_REGISTER, "cudaHostRegister", "cuda_runtime")  \
  X(IB_OP_CUDA_MEMCPY, "cudaMemcpy", "cuda_runtime")               \
  X(IB_OP_CUDA_MEMCPY_ASYNC, "cudaMemcpyAsync", "cuda_runtime")    \
  X(IB_OP_CUDA_MEMSET_ASYNC, "cudaMemsetAsync", "cuda_runtime")    \
  X(IB_OP_CUDA_LAUNCH_KERNEL, "cudaLaunchKernel", "cuda_runtime")  \
  X(IB_OP_CUDA_STREAM_SYNC, "cudaStreamSynchronize", "cuda_runtime") \
  X(IB_OP_CUDA_DEVICE_SYNC, "cudaDeviceSynchronize", "cuda_runtime") \
  X(IB_OP_CUDA_EVENT_SYNC, "cudaEventSynchronize", "cuda_runtime") \
  X(IB_OP_CUDA_STREAM_WAIT_EVENT, "cudaStreamWaitEvent", "cuda_runtime") \
  X(IB_OP_CU_LAUNCH_KERNEL, "cuLaunchKernel", "cuda_driver")       \
  X(IB_OP_CU_MEM_ALLOC, "cuMemAlloc_v2", "cuda_driver")            \
  X(IB_OP_CU_MEM_FREE, "cuMemFree_v2", "cuda_driver")              \
  X(IB_OP_CU_MEMCPY_HTOD_ASYNC, "cuMemcpyHtoDAsync_v2", "cuda_driver") \
  X(IB_OP_CU_MEMCPY_ASYNC, "cuMemcpyAsync", "cuda_driver")         \
  X(IB_OP_CU_STREAM_SYNC, "cuStreamSynchronize", "cuda_driver")    \
  X(IB_OP_CU_CTX_SYNC, "cuCtxSynchronize", "cuda_driver")          \
  X(IB_OP_CU_MEM_HOST_ALLOC, "cuMemHostAlloc", "cuda_driver")      \
  X(IB_OP_OFFCPU_PREEMPTED, "offcpu_preempted", "sched")           \
  X(IB_OP_OFFCPU_BLOCKED, "offcpu_blocked", "sched")               \
  X(IB_OP_RUNQ_WAIT, "runq_wait", "sched")                         \
  X(IB_OP_PAGE_FAULT, "page_fault", "mm")                          \
  X(IB_OP_BLOCK_IO, "block_io", "io")                              \
  X(IB_OP_FORK, "fork", "process")                                 \
  X(IB_OP_EXEC, "exec", "process")                                 \
  X(IB_OP_EXIT, "exit", "process")                                 \
  X(IB_OP_THREAD_START, "thread_start", "process")                 \
  X(IB_OP_THREAD_EXIT, "thread_exit", "process")                   \
  X(IB_OP_RENAME, "rename", "process")                             \
  X(IB_OP_BATCH_WAIT, "batch_wait", "workload")                    \
  X(IB_OP_BATCH_COMPUTE, "batch_compute", "workload")

#define IB_OP_ENUM_ENTRY(id, name, category) id,
enum ib_op { IB_OPS(IB_OP_ENUM_ENTRY) IB_OP_COUNT };
#undef IB_OP_ENUM_ENTRY

/* Ring buffers; each failed reservation is counted in ring_losses[ring]. */
enum ib_ring { IB_RING_CUDA, IB_RING_SCHED, IB_RING_PROC, IB_RING_COUNT };

/* Losses that are not ring reservations: a full in-kernel map. */
enum ib_map_loss { IB_LOSS_CUDA_INFLIGHT = IB_RING_COUNT, IB_LOSS_THREAD_STATS, IB_LOSS_COUNT };

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

/* Where a CUDA probe finds a value at function entry, packed in the attach cookie:
 * 0 = not recorded, 1..6 = integer argument register 1..6 (x86-64 SysV),
 * IB_ARG_STACK + n = n-th 8-byte slot above the return address (7th argument on). */
#define IB_ARG_NONE 0
#define IB_ARG_STACK 8
/* cookie = op | bytes_src << 16 | arg_src << 24 | stream_src << 32 | const_arg << 40 */
#define IB_COOKIE_OP(c) ((__u32)((c) & 0xffff))
#define IB_COOKIE_BYTES_SRC(c) ((__u32)(((c) >> 16) & 0xff))
#define IB_COOKIE_ARG_SRC(c) ((__u32)(((c) >> 24) & 0xff))
#define IB_COOKIE_STREAM_SRC(c) ((__u32)(((c) >> 32) & 0xff))

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
};

/* log2 histograms in microseconds (histograms table), one per (pid, metric). */
enum ib_hist_metric { IB_HIST_RUNQ_US, IB_HIST_OFFCPU_US, IB_HIST_IO_US, IB_HIST_COUNT };
#define IB_HIST_SLOTS 32
struct ib_hist_key {
  __u32 pid;
  __u32 metric;
};
struct ib_hist {
  __u64 slots[IB_HIST_SLOTS];
};

#endif /* INGERO_BPF_EVENTS_H */

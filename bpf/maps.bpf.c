/* SPDX-License-Identifier: GPL-2.0 */
/* The one definition of the configuration and the maps every program shares
 * (declared extern in common.bpf.h). */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool system_wide = false;
const volatile __u64 offcpu_min_ns = 0;
const volatile __u64 iowait_min_ns = 0;
const volatile __u64 runq_min_ns = 0;
const volatile __u64 wakeup_bytes = 0;

struct ib_tgid_filter_map tgid_filter SEC(".maps");
struct ib_thread_stats_map thread_stats SEC(".maps");
struct ib_task_clocks_map task_clocks SEC(".maps");
struct ib_histograms_map histograms SEC(".maps");
struct ib_losses_map losses SEC(".maps");
struct ib_ring_offered_map ring_offered SEC(".maps");
struct ib_python_layouts_map python_layouts SEC(".maps");
struct ib_python_walks_map python_walks SEC(".maps");
struct ib_ring_map cuda_ring SEC(".maps");
struct ib_ring_map sched_ring SEC(".maps");
struct ib_ring_map proc_ring SEC(".maps");
struct ib_ring_map profile_ring SEC(".maps");

/* SPDX-License-Identifier: GPL-2.0 */
/* Not part of the tracer's object: python_stack.bpf.h compiled, passed by the verifier and run by
 * a test (tests/tracer/python_stack_bpf_test.cc), which compares its frames with the user-space
 * walk's. A perf_event program stores the sampled thread's last Python stack by tid. */
#include "python_stack.bpf.h"

struct ib_python_stack_sample {
  __s32 count; /* frames, or a negative enum ib_py_error */
  __u32 pad;
  struct ib_python_frame frames[IB_PY_MAX_FRAMES];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct ib_python_stack_sample);
} python_stack_scratch SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 256);
  __type(key, __u32);
  __type(value, struct ib_python_stack_sample);
} python_stack_samples SEC(".maps");

SEC("perf_event")
int python_stack_check(struct bpf_perf_event_data *ctx)
{
  __u32 zero = 0;
  struct ib_python_stack_sample *s = bpf_map_lookup_elem(&python_stack_scratch, &zero);
  if (!s)
    return 0;
  bool cut;
  s->count = ib_current_python_stack(s->frames, &cut);
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  bpf_map_update_elem(&python_stack_samples, &tid, s, BPF_ANY);
  return 0;
}

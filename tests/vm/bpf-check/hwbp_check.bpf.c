// SPDX-License-Identifier: GPL-2.0-only
/*
 * Counts the traps of a kernel hardware breakpoint (a perf breakpoint event
 * per CPU), keeping the trapping ip and the length of the kernel stack seen
 * from the trap: proves that the guest runs BPF on debug-register traps.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* [0] traps, [1] the last trap's ip, [2] bytes of kernel stack bpf_get_stack() gave. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __s64);
} result SEC(".maps");

static __u64 stack[32];

SEC("perf_event")
int hwbp_check(struct bpf_perf_event_data *ctx)
{
	__u32 k0 = 0, k1 = 1, k2 = 2;
	__s64 *hits = bpf_map_lookup_elem(&result, &k0);
	__s64 *ip = bpf_map_lookup_elem(&result, &k1);
	__s64 *st = bpf_map_lookup_elem(&result, &k2);

	if (!hits || !ip || !st)
		return 0;
	__sync_fetch_and_add(hits, 1);
	*ip = PT_REGS_IP(&ctx->regs);
	*st = bpf_get_stack(ctx, stack, sizeof(stack), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";

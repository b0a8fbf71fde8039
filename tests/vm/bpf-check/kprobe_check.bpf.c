// SPDX-License-Identifier: GPL-2.0-only
/* Counts the hits of one kprobe: proves BPF kprobe attach works in a guest. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

SEC("kprobe")
int kprobe_check(void *ctx)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&hits, &zero);

	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";

// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench/kdisarm: a kprobe program that tests an armed bit the way
 * bpf/sampler.bpf.h's armed_bitmap does, and counts the hits that ran it
 * and those that found their bit set.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} armed_bitmap SEC(".maps");

__u64 runs;
__u64 armed_hits;

SEC("kprobe")
int kdisarm(struct pt_regs *ctx)
{
	__u32 word = 0;
	__u64 *w = bpf_map_lookup_elem(&armed_bitmap, &word);

	__sync_fetch_and_add(&runs, 1);
	if (!w || !(*w & 1))
		return 0;
	__sync_fetch_and_add(&armed_hits, 1);
	return 0;
}

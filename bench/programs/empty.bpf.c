// SPDX-License-Identifier: GPL-2.0-only
/* The baseline for the per-hit cost benchmark: a uprobe program that does nothing. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int bench_empty(struct pt_regs *ctx)
{
	return 0;
}

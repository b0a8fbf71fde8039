// SPDX-License-Identifier: GPL-2.0-only
/*
 * What one stack copy for the CFI unwind costs in BPF (bpf/ustack.bpf.h):
 * ustack_send() alone, timed around the call (raw_tp test runs take no
 * repeat), on a stack of the calling process (bench/programs/ustack_cost.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "kcsand.h"
#include "engine.bpf.h"

char LICENSE[] SEC("license") = "GPL";

__u64 stack_sp;		/* set by the bench: the copy starts here */
__u64 total_ns, runs;	/* of the timed calls, read by the bench */
static struct pt_regs bench_regs;

SEC("raw_tp")
int copy_stack(void *ctx)
{
	__u64 t0;

	bench_regs.sp = stack_sp;
	bench_regs.ip = 0x1000;
	t0 = bpf_ktime_get_ns();
	ustack_send(&bench_regs, KCSAND_USTACK_SEQ | 1, 0);
	total_ns += bpf_ktime_get_ns() - t0;
	runs++;
	return 0;
}

/* The frame-pointer walk every side also takes, for comparison: the bench's own user stack. */
__u64 fp_stack[KCSAND_MAX_STACK];

SEC("raw_tp")
int fp_walk(void *ctx)
{
	__u64 t0 = bpf_ktime_get_ns();

	bpf_get_stack(ctx, fp_stack, sizeof(fp_stack), BPF_F_USER_STACK);
	total_ns += bpf_ktime_get_ns() - t0;
	runs++;
	return 0;
}

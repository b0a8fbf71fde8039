// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsand's BPF programs.  One object, because every program shares the
 * watchpoint slots, the counters and the parameters as globals.
 *
 *  - uprobe/uprobe.multi: one hit per probed user memory instruction;
 *  - perf_event: a hardware watchpoint trapped (bpf/hwbp.bpf.h);
 *  - sched tracepoints: keep the set of traced processes (the target and
 *    its descendants) so that other processes running the same binary are
 *    ignored.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "kcsand.h"
#include "engine.bpf.h"
#include "sampler.bpf.h"
#include "hwbp.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Processes (tgids) under test; params.trace_all: every process. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} targets SEC(".maps");

static __always_inline int traced(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return PARAM(trace_all) || bpf_map_lookup_elem(&targets, &tgid);
}

/*
 * In a uprobe the program runs before the probed instruction and ctx->ip is
 * that instruction's address; the cookie is the site index.
 */
static __always_inline int on_user_access(struct pt_regs *ctx)
{
	__u32 site = (__u32)bpf_get_attach_cookie(ctx);
	__u64 t0;

	if (!traced() || !sampler_site_armed(site))
		return 0;
	t0 = bpf_ktime_get_ns();
	kcsand_check_access(ctx, ctx, site, ctx->ip, 1, 0);
	sampler_account(site, t0);
	return 0;
}

/* Attached through one uprobe_multi link (expected_attach_type set before load). */
SEC("uprobe")
int kcsand_uprobe_multi(struct pt_regs *ctx)
{
	return on_user_access(ctx);
}

/* The same, for per-site perf links on kernels without uprobe_multi (< 6.6). */
SEC("uprobe")
int kcsand_uprobe(struct pt_regs *ctx)
{
	return on_user_access(ctx);
}

/* A hardware watchpoint's trap in a target thread (perf breakpoint event, cookie = slot). */
SEC("perf_event")
int kcsand_hwbp(struct bpf_perf_event_data *ctx)
{
	if (!traced())
		return 0;
	return kcsand_hw_access(ctx, 1);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(kcsand_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid), one = 1;

	if (ptgid != ctgid && bpf_map_lookup_elem(&targets, &ptgid))
		bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(kcsand_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	/* The whole group is gone once its last thread exits. */
	if (BPF_CORE_READ(p, signal, live.counter) == 0)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

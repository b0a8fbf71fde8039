// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsand's BPF programs.  One object, because every program shares the
 * watchpoint slots, the counters and the parameters as globals.
 *
 *  - uprobe/uprobe.multi: one hit per probed user memory instruction;
 *  - kprobe: one hit per probed kernel memory instruction;
 *  - perf_event: a hardware watchpoint trapped, in a target thread or, in
 *    kernel mode, on any CPU (bpf/hwbp.bpf.h);
 *  - sched tracepoints: keep the set of traced processes (the target and
 *    its descendants) so that other processes running the same binary are
 *    ignored.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "kcsand.h"
#include "engine.bpf.h"
#include "sampler.bpf.h"
#include "hwbp.bpf.h"
#include "pair_trap.bpf.h"

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

#include "history.bpf.h"

/*
 * In a uprobe the program runs before the probed instruction and ctx->ip is
 * that instruction's address; the cookie is the site index.
 */
static __always_inline void check_user_access(void *ctx, struct pt_regs *regs, __u32 site,
					      int every)
{
	__u64 t0 = bpf_ktime_get_ns();

	history_access(ctx, regs, site, regs->ip);
	kcsand_check_access(ctx, regs, site, regs->ip, 1, 0, every);
	sampler_account(site, t0);
}

static __always_inline int on_user_access(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 site = (__u32)cookie;

	history_find();
	if (site & KCSAND_COOKIE_AHEAD) {
		if (traced())
			history_release_ahead(ctx, site & ~KCSAND_COOKIE_AHEAD, (__s32)(cookie >> 32));
		return 0;
	}
	if (traced() && sampler_site_armed(site))
		check_user_access(ctx, ctx, site, 0);
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

/*
 * A site armed in one thread by an execute breakpoint (the site sampler's
 * hot turns, daemon/sampler/thread_turn.c): the same check as a uprobe's, from the
 * debug exception, with the registers of the instruction about to run,
 * and a watchpoint on every hit: the other threads run natively meanwhile,
 * so each stall is a real chance to see them, and costs ~8 traps' worth.
 */
SEC("perf_event")
int kcsand_xbp(struct bpf_perf_event_data *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)&ctx->regs;
	__u32 site = (__u32)bpf_get_attach_cookie(ctx);

	if (traced())
		check_user_access(ctx, regs, site, CHECK_EVERY);
	return 0;
}

/*
 * A history watch's data breakpoint trapped (bpf/history_watch.bpf.h); the
 * cookie is the slot.  Loaded after kcsand_xbp, on the same thread
 * (engine/late_load.c), so that hot turns do not wait for it.
 */
SEC("perf_event")
int kcsand_hb_watch(struct bpf_perf_event_data *ctx)
{
	__u32 slot = (__u32)bpf_get_attach_cookie(ctx) & (KCSAND_HW_SLOTS - 1);

	if (traced())
		history_watch_trap(ctx, (struct pt_regs *)&ctx->regs, slot);
	return 0;
}

/*
 * Kernel mode.  preempt_count says whether the probed code runs in a task or
 * an interrupt.  It is __preempt_count on 6.1 and 6.15+, pcpu_hot's field in
 * between.  A classic kprobe enters through int3, which the kernel treats
 * as an NMI (irqentry_nmi_enter adds NMI_OFFSET + HARDIRQ_OFFSET); an
 * optimized kprobe adds nothing.  So when the NMI bits are set, one NMI and
 * one hardirq level are the probe's own; a kprobe hit inside a real NMI
 * through an optimized probe would then read as one level less: rare, and
 * at worst a report says "interrupt" context wrongly.
 */
extern const int __preempt_count __ksym __weak;

struct pcpu_hot {
	int preempt_count;
} __attribute__((preserve_access_index));
extern const struct pcpu_hot pcpu_hot __ksym __weak;

#define KC_NMI_MASK		0x00f00000
#define KC_NMI_OFFSET		0x00100000
#define KC_HARDIRQ_MASK		0x000f0000
#define KC_HARDIRQ_OFFSET	0x00010000
#define KC_SOFTIRQ_OFFSET	0x00000100

static __always_inline __u32 preempt_count(void)
{
	if (&__preempt_count)
		return *(const int *)bpf_this_cpu_ptr(&__preempt_count);
	if (&pcpu_hot)
		return ((const struct pcpu_hot *)bpf_this_cpu_ptr(&pcpu_hot))->preempt_count;
	return 0;
}

static __always_inline int interrupted_context(void)
{
	__u32 pc = preempt_count();

	if (pc & KC_NMI_MASK)
		pc -= KC_NMI_OFFSET + KC_HARDIRQ_OFFSET;
	return (pc & (KC_NMI_MASK | KC_HARDIRQ_MASK | KC_SOFTIRQ_OFFSET)) != 0;
}

/*
 * The daemon's heartbeat (include/kcsand.h): CLOCK_MONOTONIC, written by the
 * engine's heartbeat thread through the mmap; 0 until it starts.
 */
__u64 heartbeat_ns;

/*
 * May a kernel program check this hit?  Not when the daemon has stopped
 * beating (stopped, starved, or gone with its breakpoints left behind):
 * nothing is then checked or stalled.  Not in NMI context, seen at run
 * time: the debug exception and int3 each add one NMI level (the entry's
 * own, own_nmi), so a deeper count is a real NMI underneath, whose code
 * (perf's PMU handler, the hard-lockup callback, printk from NMI,
 * irq_work) no function name gives away, and which must not stall.
 */
static __always_inline int kernel_may_check(__u32 own_nmi)
{
	__u64 beat = *(volatile __u64 *)&heartbeat_ns;

	if (!beat || bpf_ktime_get_ns() - beat > KCSAND_HEARTBEAT_TIMEOUT_NS) {
		counter_add(KCSAND_CTR_HEARTBEAT_MISSED, 1);
		return 0;
	}
	if ((preempt_count() & KC_NMI_MASK) > own_nmi * KC_NMI_OFFSET) {
		counter_add(KCSAND_CTR_NMI_SKIPPED, 1);
		return 0;
	}
	return 1;
}

/*
 * One kprobe per site, the cookie its index.  regs->ip is the probe address
 * + 1: after the int3, and an optimized (jump) kprobe sets it the same way.
 * bpf_get_func_ip() would not do: since 6.1 it returns 0 for a kprobe that
 * is not on a function's entry.
 */
SEC("kprobe")
int kcsand_kprobe(struct pt_regs *ctx)
{
	__u32 site = (__u32)bpf_get_attach_cookie(ctx);
	int armed = sampler_site_armed(site);
	__u64 t0;

	/*
	 * int3 adds an NMI level, an optimized kprobe none: only a second level
	 * is sure to be a real NMI (the kprobe blacklist keeps most NMI code out).
	 */
	if (!kernel_may_check(1))
		return 0;
	/* The instruction runs next, out of line: its trap must know whether it was checked. */
	hw_note_probed(ctx, site, ctx->ip - 1, armed);
	if (!armed) {
		/* The site sampler disarmed it: the trap is paid, the check is not. */
		sampler_count_hit(site);
		return 0;
	}
	t0 = bpf_ktime_get_ns();
	kcsand_check_access(ctx, ctx, site, ctx->ip - 1, 0, interrupted_context(), 0);
	sampler_account(site, t0);
	return 0;
}

/* A hardware watchpoint's trap in a target thread (perf breakpoint event, cookie = slot). */
SEC("perf_event")
int kcsand_hwbp(struct bpf_perf_event_data *ctx)
{
	if (!traced())
		return 0;
	return kcsand_hw_access(ctx, 1, 0);
}

/*
 * The same in kernel mode: a breakpoint event per CPU on a kernel address.
 * The debug exception enters through irqentry_nmi_enter() as int3 does, so
 * interrupted_context() reads its preempt_count the same way.
 */
SEC("perf_event")
int kcsand_hwbp_kernel(struct bpf_perf_event_data *ctx)
{
	if (!kernel_may_check(1))
		return 0;
	return kcsand_hw_access(ctx, 0, interrupted_context());
}

/* Code-breakpoint sampling (daemon/sampler/kbp.c): which site each CPU's debug register samples. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KCSAND_KXBP_SLOTS * KCSAND_KXBP_MAX_CPUS);
	__type(key, __u32);
	__type(value, struct kcsand_kxbp_slot);
} kxbp_slots SEC(".maps");

/*
 * kcsand_check_access() for a kernel site sampled by a code breakpoint, as a
 * global function, verified once from unknown arguments: inlined in
 * kcsand_kxbp, 6.1's verifier walked it under every state of its caller:
 * 304,314 instructions then, 200,939 once global (docs/test-kernel.md, "The
 * verifier on 6.1"; the ninth pass cut the rest).  The
 * note is taken here too: on the caller's frame it put the call chain over
 * 6.1's 512 bytes of stack.
 */
__noinline int kcsand_kxbp_check_g(struct bpf_perf_event_data *ctx, __u32 site, __u32 in_interrupt)
{
	struct pt_regs *regs = (struct pt_regs *)&ctx->regs;

	hw_note_probed(regs, site, regs->ip, 1);
	return kcsand_check_access(ctx, regs, site, regs->ip, 0, in_interrupt,
				   CHECK_EVERY | CHECK_PAIR);
}

/*
 * An execute breakpoint on a sampled kernel site, per CPU: the debug
 * exception comes before the instruction runs, with its registers, as a
 * kprobe's handler does, so the check is the kprobe's; every trap arms a
 * watchpoint (the site was chosen by the sampler, not by the skip count),
 * up to KCSAND_KXBP_CHECKS per placement, gap_ns apart.
 */
SEC("perf_event")
int kcsand_kxbp(struct bpf_perf_event_data *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)&ctx->regs;
	__u32 r = bpf_get_smp_processor_id() * KCSAND_KXBP_SLOTS +
		  ((__u32)bpf_get_attach_cookie(ctx) & (KCSAND_KXBP_SLOTS - 1));
	struct kcsand_kxbp_slot *s = bpf_map_lookup_elem(&kxbp_slots, &r);
	__u64 t0;

	if (!s || !s->ip || s->ip != regs->ip)
		return 0;
	__sync_fetch_and_add(&s->hits, 1);
	if (!kernel_may_check(1))
		return 0;
	/* Only this CPU's traps reach its slot, one at a time: plain counts. */
	if (s->checks >= KCSAND_KXBP_CHECKS)
		return 0;
	t0 = bpf_ktime_get_ns();
	if (s->checks && t0 - s->last_ns < s->gap_ns)
		return 0;
	s->checks++;
	s->last_ns = t0;
	kcsand_kxbp_check_g(ctx, s->site, interrupted_context());
	sampler_account(s->site, t0);
	__sync_fetch_and_add(&s->ns, bpf_ktime_get_ns() - t0);
	return 0;
}

/*
 * Both stacks in breakpoint mode (bpf/pair.bpf.h): each CPU's poll, a
 * cpu-clock event whose sample wakes the CPU's armer when a request waits.
 */
SEC("perf_event")
int kcsand_pair_poll(struct bpf_perf_event_data *ctx)
{
	return pair_poll();
}

/* And the data breakpoint's trap on the other CPUs: a watcher's partner. */
SEC("perf_event")
int kcsand_pair_trap(struct bpf_perf_event_data *ctx)
{
	if (!kernel_may_check(1))
		return 0;
	return pair_trap(ctx, interrupted_context());
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

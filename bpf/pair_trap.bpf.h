/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The other side of bpf/pair.bpf.h: what runs on the CPUs that did not
 * set the watchpoint.
 *
 *  - The poll: a cpu-clock perf event per CPU, every KCSAND_PAIR_POLL_NS,
 *    runs kcsand_pair_poll, which lets the event's own (empty) sample out
 *    only when a request this CPU has not acknowledged is pending: the
 *    sample wakes the CPU's armer, a pinned real-time thread of kcsand's
 *    blocked in poll(2) on that event (daemon/hw/pair.c).  A BPF program
 *    cannot program a debug register nor wake a thread on another CPU (a
 *    ring buffer's wake-up is an irq_work on the watcher's own CPU, whose
 *    interrupts are off for the whole stall), so each CPU looks for itself.
 *  - The trap: the data breakpoint's event runs kcsand_pair_trap just
 *    after the access (x86 traps after it), with the accessor's stack.  It
 *    checks the soft watchpoints as a probed access would: a conflicting
 *    one is consumed, and the watcher reports both stacks.
 */
#ifndef KCSAND_PAIR_TRAP_BPF_H
#define KCSAND_PAIR_TRAP_BPF_H

/* Its struct kcsand_access::site: no site of the table, the pair register. */
#define PAIR_SITE	(KCSAND_HW_SITE_BASE + KCSAND_HW_SLOTS)

/* Is a request pending that this CPU has not acknowledged?  Then wake its armer. */
static __always_inline int pair_poll(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	if (cpu >= KCSAND_PAIR_MAX_CPUS)
		return 0;
	return *(volatile __u64 *)&pair_request != *(volatile __u64 *)&pair_ack[cpu];
}

/*
 * Was this trap's access already checked by the code breakpoint that
 * sampled it on this CPU (its note, bpf/hwbp.bpf.h)?  A code breakpoint
 * runs the instruction in place, so its trap comes at the note's next_ip
 * exactly; a note left from an earlier sample matches no later trap.
 */
static __always_inline int pair_sampled_here(struct bpf_perf_event_data *ctx)
{
	struct hw_probed_note *n;
	__u32 zero = 0;

	n = bpf_map_lookup_elem(&hw_probed, &zero);
	if (!n || !n->size || !n->checked || n->next_ip != ctx->regs.ip)
		return 0;
	n->size = 0;
	return 1;
}

/* The register the request asked for, as a slot of bpf/hwbp.bpf.h's, for its decoding. */
static __always_inline void pair_view(__u64 word, struct kcsand_hw_slot *view)
{
	__u64 addr = word & KCSAND_PAIR_ADDR_MASK;

	/* Kernel addresses are sign-extended from bit 47. */
	if (addr & (1ULL << 47))
		addr |= ~KCSAND_PAIR_ADDR_MASK;
	view->addr = addr;
	view->len = 1u << ((word >> KCSAND_PAIR_LEN_SHIFT) & 3);
	view->mode = KCSAND_HW_WATCH;
	view->gen = 0;
	view->var_addr = addr;
	view->var_len = view->len;
}

/*
 * The register's own word is this CPU's acknowledgement, not the current
 * request: an armer that came late may still hold an earlier watcher's
 * address while another watcher asks for a new one, and the access is at
 * the address that trapped.  The armer clears it while it re-targets, so
 * that a trap in between is dropped rather than taken for either address.
 */
static __always_inline int pair_trap(struct bpf_perf_event_data *ctx, int in_interrupt)
{
	__u32 cpu = bpf_get_smp_processor_id(), wslot, wgen;
	struct kcsand_hw_slot view;
	struct hit hit = {};
	__u64 word, wp;

	pair_count(KCSAND_PAIR_CTR_TRAPS, 1);
	if (cpu >= KCSAND_PAIR_MAX_CPUS)
		return 0;
	word = *(volatile __u64 *)&pair_ack[cpu];
	/* Off, or being re-targeted: nothing to say which address trapped. */
	if (!(word & KCSAND_PAIR_ADDR_MASK) || !PARAM(enabled))
		return 0;
	if (pair_sampled_here(ctx)) {
		pair_count(KCSAND_PAIR_CTR_PROBED, 1);
		return 0;
	}
	hw_probed_untake();
	pair_view(word, &view);
	hit.ctx = ctx;
	hit.regs = (struct pt_regs *)&ctx->regs;
	hit.site = &hw_site;
	hit.ra_off = hw_site.ra_off;
	hit.site_idx = PAIR_SITE;
	hit.ip = ctx->regs.ip;
	hit.addr = view.addr;
	hit.size = view.len;
	/* A write-only register traps writes; a read-write one, a read until decoded. */
	hit.type = (word & KCSAND_PAIR_RW) ? 0 : KCSAND_ACCESS_WRITE;
	hit.in_interrupt = in_interrupt;
	hit.acc_flags = KCSAND_ACC_HWBP | KCSAND_ACC_PAIR;
	if (hw_decoded_access(ctx, &view, KCSAND_HW_SLOTS - 1, &hit, 0, hit.ip))
		return 0;
	if (!find_watchpoint(&hit, &wslot, &wp, &wgen))
		return 0;
	found_watchpoint(&hit, wslot, wp, wgen);
	pair_count(KCSAND_PAIR_CTR_CAUGHT, 1);
	return 0;
}

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The history's watches: a racing access that runs once, late, at a site
 * the sampler has backed off (the last iteration of a hot loop, a chunk's
 * boundary) is never probed, so it never meets the shadow, however long
 * the shadow remembers the other side.  A sampled plain read of a granule
 * the shadow has nothing of (no thread's access there yet: data whose
 * writer was never sampled, or is still to come) is offered to the daemon,
 * which puts a write breakpoint on it in the process's other threads
 * (daemon/hw/hwbp.c, hwbp__hb_watch()).  The next write there, from any
 * code, traps; the trap is checked against the shadow as a sampled write
 * would be (history_watch_trap()), then the watch is spent.
 *
 * Why reads of empty granules: a write nobody read or wrote before is an
 * initialisation far more often than a race; a read of data whose writer
 * the history never saw is the side a later unsampled write races with.
 * The reader's own thread is not watched: its writes come after its read.
 * The debug registers are few (KCSAND_HW_SLOTS, shared with escalation and
 * --watch): hb_watch_room is how many watches the daemon can arm now, and
 * a read takes one only while it is above 0, so the common path pays one
 * load.
 */
#ifndef KCSAND_HISTORY_WATCH_BPF_H
#define KCSAND_HISTORY_WATCH_BPF_H

/* Watches the daemon can arm now (it sets it; each offer takes one). */
volatile __s32 hb_watch_room;

/*
 * How far above its stack pointer a thread's own frames are taken to reach:
 * a read there is of its own stack (an escaped local the kernel, the vDSO
 * or libc filled), which another thread seldom writes.
 */
#define HB_WATCH_OWN_STACK	(8ULL << 20)

/*
 * A global function, verified once per program: inlined, it added 4,000
 * instructions to each program that checks sampled accesses.
 */
__noinline int hb_watch_offer_g(struct hb_scratch *scratch, __u32 tgid, __u64 sp)
{
	const struct hb_scan *r;
	const struct hb_access *a;
	struct kcsand_hb_watch *rec;

	if (!scratch)
		return 0;
	r = &scratch->scan;
	a = &scratch->acc;
	/* A plain read of one aligned word, whose granule held nothing of anyone's but reads. */
	if ((a->type & (KCSAND_ACCESS_WRITE | KCSAND_ACCESS_ATOMIC)) || r->race || r->own >= 0 ||
	    r->mine >= 0 || r->old >= 0)
		return 0;
	if (!a->size || a->size > 8 || (a->size & (a->size - 1)) || (a->addr & (a->size - 1)))
		return 0;
	if (a->addr + 128 >= sp && a->addr < sp + HB_WATCH_OWN_STACK)
		return 0;
	if (__sync_fetch_and_add(&hb_watch_room, -1) <= 0) {
		__sync_fetch_and_add(&hb_watch_room, 1);
		return 0;
	}
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		__sync_fetch_and_add(&hb_watch_room, 1);
		return 0;
	}
	__builtin_memset(rec, 0, sizeof(*rec));
	rec->type = KCSAND_REC_HB_WATCH;
	rec->tgid = tgid;
	rec->tid = (__u32)bpf_get_current_pid_tgid();
	rec->size = a->size;
	rec->addr = a->addr;
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
	hb_count(KCSAND_HB_CTR_WATCH_ASKED);
	return 0;
}

/* Offer the access just checked, when the daemon can arm a watch: one load otherwise. */
static __always_inline void hb_watch_offer(const struct hb_thread *t,
					   struct hb_scratch *scratch, __u64 sp)
{
	if (hb_watch_room > 0)
		hb_watch_offer_g(scratch, t->tgid, sp);
}

/* Tell the daemon that slot's watch trapped, so that it closes its events. */
static __always_inline void hb_watch_spent(__u32 slot, __u32 gen)
{
	struct kcsand_hb_watch *rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);

	if (!rec)
		return;		/* the daemon closes it when its time is up */
	__builtin_memset(rec, 0, sizeof(*rec));
	rec->type = KCSAND_REC_HB_WATCH;
	rec->spent = 1;
	rec->slot = slot;
	rec->gen = gen;
	/* Woken now: until the daemon closes them, its events trap for nothing. */
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
}

/*
 * Memory that changed owner (hb_forget: freed, unmapped, a new thread's
 * stack): a watch of a read there watches a read that is forgotten, and
 * the next write it catches is the allocator's (free's list pointers in
 * the block, _int_free) or the next owner's, which the history would then
 * remember as a write no later access is ordered after: a block freed by
 * one thread and handed by malloc to another, with no sync the history
 * sees between them, was reported as `_int_free / put`.  So those watches
 * are spent, unchecked.  The slots do not say whose process they watch:
 * a free at the same address in another process spends one too (a watch
 * lost, no report made).
 */
static __always_inline void hb_watch_forget(__u64 lo, __u64 hi)
{
	for (int i = 0; i < KCSAND_HW_SLOTS; i++) {
		__u32 slot = i;		/* its address is taken: the loop's count stays in a register */
		struct kcsand_hw_slot *hs = bpf_map_lookup_elem(&hw_slots, &slot);

		if (!hs || hs->mode != KCSAND_HW_HISTORY || hs->var_addr >= hi ||
		    hs->var_addr + hs->var_len <= lo)
			continue;
		if (!__sync_bool_compare_and_swap(&hs->mode, KCSAND_HW_HISTORY, KCSAND_HW_OFF))
			continue;	/* a trap took it */
		hb_watch_spent(slot, hs->gen);
		hb_count(KCSAND_HB_CTR_WATCH_FORGOTTEN);
	}
}

/*
 * The trapped write as the access to check: the instruction before the
 * trap's ip when the daemon has decoded it (hw_insns), else the debug
 * register's range, written, at the trap's ip (the daemon decodes that side
 * before it prints the report).  0; 1 when the decode shows a marked write
 * (checked no further); -1 when it shows a neighbour's access under the
 * register.
 */
static __always_inline int hb_watch_fill(struct hb_scratch *scratch, struct pt_regs *regs,
					 const struct kcsand_hw_slot *hs, __u32 slot, __u64 next_ip)
{
	struct kcsand_hw_insn_key k = { .pid = bpf_get_current_pid_tgid() >> 32,
					.next_ip = next_ip };
	const struct kcsand_site *s = bpf_map_lookup_elem(&hw_insns, &k);
	struct hb_access *a = &scratch->acc;
	__u8 insn = 0;

	a->site_idx = KCSAND_HW_SITE_BASE + slot;
	a->ip = next_ip;
	a->addr = hs->addr;
	a->size = hs->len;
	a->type = KCSAND_ACCESS_WRITE;
	a->flags = KCSAND_ACC_HWBP;
	bpf_probe_read_user(&insn, 1, (void *)next_ip);
	a->ra = 0;
	if (hw_ra_off(insn) == 0)
		bpf_probe_read_user(&a->ra, sizeof(a->ra), (void *)regs->sp);
	scratch->copy_key = 0;
	scratch->stack_key = ~0ULL;
	if (!s) {
		a->type |= HB_TYPE_HW_RAW;
		hw_ask_decode(slot, &k);
		return 0;
	}
	if (!s->size)
		return 0;
	a->ip = next_ip - s->insn_len;
	a->flags |= KCSAND_ACC_DECODED;
	a->size = s->size;
	a->type = site_access_type(s);
	/* A marked write may be the atomic the read's address is an atomic's: spent unchecked. */
	if (a->type & KCSAND_ACCESS_ATOMIC)
		return 1;
	if (!(s->flags & KCSAND_SITE_ADDR_LOST))
		a->addr = site_address(s, regs, a->ip);
	if (a->addr >= hs->addr + hs->len || hs->addr >= a->addr + a->size || !a->size ||
	    a->size > KCSAND_MAX_ACCESS)
		return -1;
	return 0;
}

/*
 * The write checked against the watched read's granule only, where the
 * read's cell is (the read was one aligned word): hb_access_granules()'s
 * body once, so that verifying kcsand_hb_watch costs a fifth of its loop.
 * The report (hb_check_report()'s, from a granule of its own) as for a
 * sampled access.
 */
static __always_inline int hb_watch_check(void *ctx, struct pt_regs *regs, struct hb_thread *t,
					  struct hb_scratch *scratch, __u64 granule)
{
	struct hb_shadow *e;
	__u32 seq;
	int race;

	scratch->acc.granule = granule;
	e = hb_shadow_take(&scratch->acc, t->tgid, &seq);
	if (!e)
		return 0;
	hb_drop_forgotten_g(e, t->tgid, granule << 3);
	hb_region_note_g(t->tgid, granule);
	hb_scan_g(e, t, scratch);
	race = hb_check(ctx, scratch, t, e, seq);
	if (race && !hb_task_stack_dead(t->tgid, scratch->acc.addr, scratch->found.time_ns,
					regs->sp) &&
	    !hb_inflight(t, scratch) &&
	    hb_report_due(scratch->found.site, scratch->acc.site_idx, scratch->now)) {
		scratch->acc.ustack = ustack_send_seq(regs, 1, 1);
		hb_report(ctx, scratch, t->tgid);
	}
	if (scratch->copy_key)
		hb_stack_copy(regs, scratch->copy_key);
	return race;
}

/*
 * A watch's data breakpoint trapped (kcsand_hb_watch, the slot its
 * cookie), in a thread other than the reader's, after a write overlapping
 * the read: checked against the shadow as a sampled write, with the
 * thread's clock as it is now, which is what it was at the write.  The
 * watch is spent by the first trap that takes it (the slot's mode swapped
 * to off), whether or not a race was found: a write ordered after the read
 * orders that thread's later ones too.
 */
static __always_inline void history_watch_trap(void *ctx, struct pt_regs *regs, __u32 slot)
{
	struct kcsand_hw_slot *hs = bpf_map_lookup_elem(&hw_slots, &slot);
	struct hb_scratch *scratch;
	struct hb_thread *t;
	__u32 zero = 0, gen;
	int fill;
	__u64 t0;

	if (!hs || hs->mode != KCSAND_HW_HISTORY) {
		/* Spent, its events not closed yet: a trap that costs and checks nothing. */
		hb_count(KCSAND_HB_CTR_WATCH_STALE);
		return;
	}
	if (!PARAM(enabled) || !hb_traced() || hb_paused)
		return;
	t0 = bpf_ktime_get_ns();
	t = hb_self();
	scratch = bpf_map_lookup_elem(&hb_scratch, &zero);
	if (!t || !scratch)
		return;
	gen = hs->gen;
	fill = hb_watch_fill(scratch, regs, hs, slot, ustack_program_ip(regs->ip));
	if (fill < 0)
		return;		/* a neighbour's write: the watch stays */
	if (!__sync_bool_compare_and_swap(&hs->mode, KCSAND_HW_HISTORY, KCSAND_HW_OFF))
		return;		/* another thread's trap took it */
	hb_watch_spent(slot, gen);
	if (fill)
		return;
	hb_new_gen(t, t0);
	hb_settle_at(t, regs->sp);
	hb_count(KCSAND_HB_CTR_WATCH_TRAPS);
	hb_count(KCSAND_HB_CTR_CHECKED);
	hb_watch_check(ctx, regs, t, scratch, hs->var_addr >> 3);
	hb_time(KCSAND_HB_CTR_ACCESS_NS, t0);
}

#endif

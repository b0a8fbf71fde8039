/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Hardware watchpoints: a perf breakpoint event (PERF_TYPE_BREAKPOINT) per
 * target thread in user mode, per online CPU in kernel mode, this program
 * attached, the link's cookie naming one of the KCSAND_HW_SLOTS slots the
 * daemon arms (daemon/hw/hwbp.c).
 *
 * x86 debug registers trap after the access: the value is already written
 * and regs->ip is the next instruction, so the accessor's stack is the
 * trap's and the report says so.  A trap is an access like a probe hit: it
 * first looks for a soft watchpoint to consume (the probed watcher then
 * reports both stacks), so a race whose other side is not probed is still
 * seen.  Beyond that:
 *
 *  - ESCALATION (a race of unknown origin armed the slot; write-only
 *    breakpoint): the access is sent to the daemon, which pairs it with the
 *    watcher side of the unknown-origin report it kept.
 *  - WATCH (kcsanctl run --watch; read-write breakpoint): DataCollider's
 *    scheme.  Every skip_watch-th trap becomes a watcher: it arms a soft
 *    watchpoint and stalls, with its access done and its thread held, so
 *    an access from another thread in that window, probed or trapped, is a
 *    race.
 *
 * The access is the instruction before the trap's ip, which the daemon
 * decodes once per ip on request (hw_insns): its own address, size and
 * direction (read-write for a read-modify-write), and an access outside
 * the watched variable (a neighbour under a debug register widened to an
 * aligned range) is dropped.  Until the decode is in, and where it fails,
 * the access is the debug register's range, and a changed value since the
 * previous trap tells a write (a write of the same value passes for a read).
 */
#ifndef KCSAND_HWBP_BPF_H
#define KCSAND_HWBP_BPF_H

/* Armed by the daemon; gen changes at every re-arm. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KCSAND_HW_SLOTS);
	__type(key, __u32);
	__type(value, struct kcsand_hw_slot);
} hw_slots SEC(".maps");

/* Last value seen at each slot's address (set by the daemon when it arms). */
__u64 hw_last_value[KCSAND_HW_SLOTS];
/* ktime of the last record sent per slot: a hot writer must not flood the ring. */
__u64 hw_last_emit[KCSAND_HW_SLOTS];

/* kcsand's own hardware-watchpoint counters (.bss, read by the daemon). */
enum hw_counter {
	HW_CTR_TRAPS,
	HW_CTR_CONSUMED,	/* a trap consumed a soft watchpoint */
	HW_CTR_SENT,		/* escalation accesses sent to the daemon */
	HW_CTR_WATCHERS,	/* watch traps that set a watchpoint */
	HW_CTR_PROBED,		/* traps of a kprobed access, left to its probe */
	HW_CTR_OUTSIDE,		/* decoded accesses outside the variable, dropped */
	HW_CTR_UNDECODED,	/* traps taken before their instruction was decoded */
	HW_CTR_COUNT,
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct kcsand_hw_insn_key);
	__type(value, struct kcsand_site);
} hw_insns SEC(".maps");

/* ktime of the last decode request per slot: one per ms at most. */
__u64 hw_last_ask[KCSAND_HW_SLOTS];
__u64 hw_counters[HW_CTR_COUNT];

/*
 * What a trapped access looks like to the engine: a frame-pointer walk, and
 * when the trap stopped on a ret (an access at the end of a frameless leaf
 * function, as in most getters and setters) the return address at [rsp],
 * which the walk would skip.  The kernel's own unwinder (ORC on x86) knows
 * frameless functions, so kernel traps always use hw_site.
 */
const struct kcsand_site hw_site = { .ra_off = -1, .scale = 1 };

/*
 * The trap's ra_off: 0 (the return address at [rsp]) when it stopped on a
 * ret, else hw_site's -1.  Without a branch, and not as a second site: two
 * constant sites made the verifier follow the whole trap twice (kcsand_hwbp:
 * 411,207 instructions and 40 s on the test guest's 6.1 kernel, 201,780 and
 * 19 s with one site and the choice at a variable offset).  The empty asm
 * hides that d is a byte, or the compiler turns the arithmetic back into a
 * comparison and a branch.
 */
static __always_inline __s16 hw_ra_off(__u8 insn)
{
	__u32 d = insn ^ 0xc3;

	asm volatile("" : "+r"(d));
	return (__s16)(((d - 1) >> 31) & 1) - 1;
}

/* Escalation records per slot are at least this far apart. */
#define HW_EMIT_INTERVAL_NS	(1000 * 1000)

static __always_inline void hw_count(enum hw_counter c)
{
	if (c < HW_CTR_COUNT)
		__sync_fetch_and_add(&hw_counters[c], 1);
}

static __always_inline void hw_send(const struct hit *hit, __u32 slot, __u32 gen, __u64 old,
				    const __u64 *cur)
{
	struct kcsand_hw_access *rec;
	__u64 now = bpf_ktime_get_ns(), ustack;
	__u64 *last = &hw_last_emit[slot & (KCSAND_HW_SLOTS - 1)];

	if (now - *(volatile __u64 *)last < HW_EMIT_INTERVAL_NS)
		return;
	*last = now;
	ustack = ustack_send_seq(hit->regs, hit->user, 1);
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		counter_add(KCSAND_CTR_RECORDS_DROPPED, 1);
		return;
	}
	rec->type = KCSAND_REC_HW_ACCESS;
	rec->slot = slot;
	rec->gen = gen;
	rec->value_valid = 1;
	rec->time_ns = now;
	rec->value[0] = cur[0];
	rec->value[1] = old;
	rec->value[2] = 0;
	rec->value[3] = 0;
	fill_access(hit, &rec->acc);
	rec->acc.ustack = ustack;
	bpf_ringbuf_submit(rec, 0);
	hw_count(HW_CTR_SENT);
}

/* Ask the daemon to decode the instruction before a trap's ip. */
static __always_inline void hw_ask_decode(__u32 slot, const struct kcsand_hw_insn_key *k)
{
	__u64 now = bpf_ktime_get_ns(), *last = &hw_last_ask[slot & (KCSAND_HW_SLOTS - 1)];
	struct kcsand_hw_decode *rec;

	hw_count(HW_CTR_UNDECODED);
	if (now - *(volatile __u64 *)last < HW_EMIT_INTERVAL_NS)
		return;
	*last = now;
	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec)
		return;
	rec->type = KCSAND_REC_HW_DECODE;
	rec->pid = k->pid;
	rec->next_ip = k->next_ip;
	bpf_ringbuf_submit(rec, 0);
}

/*
 * The trapped access as its instruction says, in h.  0: h holds it, or the
 * decode is not in yet (h keeps the debug register's range); -1: it is
 * outside the variable, a neighbour's access.
 */
static __always_inline int hw_decoded_access(struct bpf_perf_event_data *ctx,
					     const struct kcsand_hw_slot *hw_slot, __u32 slot,
					     struct hit *hit, int user, __u64 next_ip)
{
	/* Kernel code is one address space: its decodes are under pid 0. */
	struct kcsand_hw_insn_key k = { .pid = user ? bpf_get_current_pid_tgid() >> 32 : 0,
					.next_ip = next_ip };
	const struct kcsand_site *s = bpf_map_lookup_elem(&hw_insns, &k);

	if (!s) {
		hw_ask_decode(slot, &k);
		/*
		 * Until the decode is in, a register wider than the variable
		 * may have trapped a neighbour's access: drop it rather than
		 * report a false pair (the next trap there is decoded).
		 */
		return hw_slot->var_len && (hw_slot->var_addr != hw_slot->addr ||
					    hw_slot->var_len != hw_slot->len) ? -1 : 0;
	}
	if (!s->size)
		return 0;
	/* The report's frame is the access, not the instruction after it. */
	hit->ip = next_ip - s->insn_len;
	hit->acc_flags |= KCSAND_ACC_DECODED;
	hit->size = s->size;
	hit->type = site_access_type(s);
	if (s->flags & KCSAND_SITE_ADDR_LOST)
		return 0;	/* the register's range stands in for the address */
	hit->addr = site_address(s, (struct pt_regs *)&ctx->regs, next_ip - s->insn_len);
	if (hw_slot->var_len && (hit->addr >= hw_slot->var_addr + hw_slot->var_len ||
			    hw_slot->var_addr >= hit->addr + hit->size)) {
		hw_count(HW_CTR_OUTSIDE);
		return -1;
	}
	return 0;
}

/* Does an access of size bytes at addr trap one of the armed slots? */
static __always_inline int hw_slot_covers(__u64 addr, __u32 size, int write)
{
#pragma unroll
	for (__u32 i = 0; i < KCSAND_HW_SLOTS; i++) {
		__u32 k = i;
		const struct kcsand_hw_slot *hw_slot = bpf_map_lookup_elem(&hw_slots, &k);

		if (hw_slot && hw_slot->mode != KCSAND_HW_OFF &&
		    addr < hw_slot->addr + hw_slot->len && hw_slot->addr < addr + size &&
		    (write || hw_slot->mode != KCSAND_HW_ESCALATION))
			return 1;
	}
	return 0;
}

/* Called by the kprobe program before its check: see struct hw_probed_note. */
static __always_inline void hw_note_probed(struct pt_regs *regs, __u32 site_idx, __u64 ip,
					   int checked)
{
	const struct kcsand_site *site = bpf_map_lookup_elem(&sites, &site_idx);
	struct hw_probed_note *n;
	__u32 zero = 0;

	n = bpf_map_lookup_elem(&hw_probed, &zero);
	if (!site || !n)
		return;
	ip -= site->probe_delta;
	n->addr = site_address(site, regs, ip);
	n->next_ip = ip + site->insn_len;
	n->size = site->size;
	n->write = !!(site->flags & KCSAND_SITE_WRITE);
	n->checked = !!checked;
	n->nr_frames = 0;
	if (!checked && hw_slot_covers(n->addr, n->size, n->write)) {
		long r = bpf_get_stack(regs, n->stack, sizeof(n->stack), 0);

		n->nr_frames = r > 0 ? (__s32)((__u64)r / 8) : 0;
	}
}

/*
 * Is this kernel trap the copy of the access the last kprobe on this CPU
 * checked?  1: leave it to the probe.  0: go on; when the copy is of a
 * disarmed site, with the site's ip and the frames its probe took in h.
 */
static __always_inline int hw_take_probed(const struct kcsand_hw_slot *hw_slot, struct hit *hit)
{
	struct hw_probed_note *n;
	__u32 zero = 0;

	n = bpf_map_lookup_elem(&hw_probed, &zero);
	if (n)
		n->taken = 0;
	if (!n || !n->size || n->addr >= hw_slot->addr + hw_slot->len ||
	    hw_slot->addr >= n->addr + n->size)
		return 0;
	if (hw_slot->mode == KCSAND_HW_ESCALATION && !n->write)
		return 0;	/* a write-only breakpoint: a read cannot have trapped */
	n->size = 0;
	if (!n->checked) {
		hit->ip = n->next_ip;
		n->taken = n->nr_frames > 0;
		return 0;
	}
	hw_count(HW_CTR_PROBED);
	return 1;
}

/*
 * One trap.  In the kernel the debug exception is entered like an NMI (the
 * handler also clears DR7 on this CPU for its duration, so the program's own
 * reads of the address do not trap again); in_interrupt is computed by the
 * caller from preempt_count as for a kprobe.
 */
static __always_inline int kcsand_hw_access(struct bpf_perf_event_data *ctx, int user,
					    int in_interrupt)
{
	__u32 slot = (__u32)bpf_get_attach_cookie(ctx) & (KCSAND_HW_SLOTS - 1), wslot, wgen, zero = 0;
	struct kcsand_hw_slot *hw_slot = bpf_map_lookup_elem(&hw_slots, &slot);
	struct kcsand_cpu_state *percpu;
	__u64 cur[4], old, wp;
	struct hit hit;
	__u8 insn = 0;

	if (!hw_slot || hw_slot->mode == KCSAND_HW_OFF || !PARAM(enabled))
		return 0;
	hw_count(HW_CTR_TRAPS);
	/* A uprobe's copy of the instruction trapped: the program's ip, not the copy's. */
	hit.ip = user ? ustack_program_ip(ctx->regs.ip) : ctx->regs.ip;
	if (!user && hw_take_probed(hw_slot, &hit))
		return 0;
	if (user)
		bpf_probe_read_user(&insn, 1, (void *)hit.ip);
	hit.ctx = ctx;
	hit.regs = &ctx->regs;
	hit.site = &hw_site;
	hit.ra_off = hw_ra_off(insn);
	hit.site_idx = KCSAND_HW_SITE_BASE + slot;
	hit.addr = hw_slot->addr;
	hit.size = hw_slot->len;
	hit.in_interrupt = in_interrupt;
	hit.user = user;
	hit.acc_flags = KCSAND_ACC_HWBP;
	hit.every = 0;
	hit.pair = 0;
	if (sample_value(&hit, cur))
		return 0;
	old = __sync_lock_test_and_set(&hw_last_value[slot & (KCSAND_HW_SLOTS - 1)], cur[0]);
	/* A write-only breakpoint traps on writes; otherwise a changed value tells one. */
	hit.type = hw_slot->mode == KCSAND_HW_ESCALATION || old != cur[0] ? KCSAND_ACCESS_WRITE : 0;
	if (hw_decoded_access(ctx, hw_slot, slot, &hit, user, hit.ip))
		return 0;

	if (find_watchpoint(&hit, &wslot, &wp, &wgen)) {
		found_watchpoint(&hit, wslot, wp, wgen);
		hw_count(HW_CTR_CONSUMED);
		return 0;
	}
	if (hw_slot->mode == KCSAND_HW_ESCALATION) {
		hw_send(&hit, slot, hw_slot->gen, old, cur);
		return 0;
	}
	percpu = bpf_map_lookup_elem(&cpu_state, &zero);
	hit.percpu = percpu;
	if (percpu && should_watch(&hit, percpu)) {
		hw_count(HW_CTR_WATCHERS);
		setup_watchpoint(&hit);
	}
	return 0;
}

#endif

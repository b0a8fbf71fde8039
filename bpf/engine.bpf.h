/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KCSAN's soft-watchpoint protocol, run on every probe hit.
 *
 * Fast path (every hit): look up the site, compute the address from the
 * registers, look for a conflicting watchpoint in three slots, decrement
 * the per-CPU skip counter.  Slow path (every skip_watch-th plain access):
 * arm a watchpoint, sample the value, stall, re-sample, disarm, report.
 *
 * Everything here is __always_inline so that the uprobe and kprobe
 * programs each get one flat function the verifier can follow.
 */
#ifndef KCSAND_ENGINE_BPF_H
#define KCSAND_ENGINE_BPF_H

#include "watchpoint.h"
#include "atomics.bpf.h"

/* Filled before load from the sites the daemon decoded; indexed by the probe cookie. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* resized to the number of sites before load */
	__type(key, __u32);
	__type(value, struct kcsand_site);
} sites SEC(".maps");

/*
 * A slot's side table.  The watcher that reserved the slot writes owner
 * (its full generation and its address space) before it arms the slot, so
 * a consumer that sees the armed watchpoint also sees whose it is.  The
 * consumer owns acc once its cmpxchg on the slot succeeded; it fills acc
 * and then publishes with ready = generation + 1 (xchg: a full barrier).
 * A consumed slot stays taken (ON and CONS set: no watcher can arm it, no
 * access can consume it) until the watcher has copied acc into its report,
 * or, when the watcher gave up waiting (SLOT_ABANDONED in ready), until the
 * late consumer has published: whoever comes second frees the slot.
 */
struct slot_info {
	__u64 owner;	/* generation << 32 | address space (tgid; 0 in kernel mode) */
	__u64 ready;
	struct kcsand_access acc;
};

#define SLOT_ABANDONED	(1ULL << 63)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WP_NUM_SLOTS);
	__type(key, __u32);
	__type(value, struct slot_info);
} slot_infos SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kcsand_cpu_state);
} cpu_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);	/* resized before load */
} events SEC(".maps");

/* Live parameters (.data), written by the daemon through the skeleton's mmap. */
struct kcsand_params params = {
	.enabled = 1,
	.skip_watch = 4000,
	.skip_watch_randomize = 1,
	.udelay_task = 80,
	.udelay_interrupt = 20,
	.delay_randomize = 1,
	.assume_plain_writes_atomic = 1,
	.interrupt_watcher = 0,
	.consumer_wait_us = 100,
	.stall_budget_us = 500000,
};

/* Counters (.bss), read by the daemon through the mmap. */
__u64 counters[KCSAND_CTR_COUNT];

/* Watcher generations; only the low WP_GEN bits go into an encoding. */
__u32 wp_generation;

/* The slots themselves: one u64 each, see watchpoint.h. */
__u64 watchpoints[WP_NUM_SLOTS];

#define PARAM(name) (*(volatile __u32 *)&params.name)

static __always_inline void counter_add(enum kcsand_counter c, __s64 v)
{
	if (c < KCSAND_CTR_COUNT)
		__sync_fetch_and_add(&counters[c], v);
}

/* After the ring buffer and counter_add(): a copy the ring has no room for is counted. */
#include "ustack.bpf.h"

/* Registers in the decoder's numbering (enum kcsand_reg - 1). */
struct regs_copy {
	__u64 r[16];
};

static __always_inline void copy_regs(struct regs_copy *rc, struct pt_regs *regs)
{
	rc->r[0] = regs->ax;
	rc->r[1] = regs->cx;
	rc->r[2] = regs->dx;
	rc->r[3] = regs->bx;
	rc->r[4] = regs->sp;
	rc->r[5] = regs->bp;
	rc->r[6] = regs->si;
	rc->r[7] = regs->di;
	rc->r[8] = regs->r8;
	rc->r[9] = regs->r9;
	rc->r[10] = regs->r10;
	rc->r[11] = regs->r11;
	rc->r[12] = regs->r12;
	rc->r[13] = regs->r13;
	rc->r[14] = regs->r14;
	rc->r[15] = regs->r15;
}

static __always_inline __u64 site_address(const struct kcsand_site *s, struct pt_regs *regs,
					  __u64 ip)
{
	struct regs_copy rc;
	__u64 addr = s->disp;

	if (s->base == KCSAND_REG_RIP) {
		addr += ip + s->insn_len;
	} else if (s->base || s->index) {
		copy_regs(&rc, regs);
		if (s->base)
			addr += rc.r[(s->base - 1) & 15];
		if (s->index)
			addr += rc.r[(s->index - 1) & 15] * s->scale;
	}
	return addr;
}

static __always_inline __u32 site_access_type(const struct kcsand_site *s)
{
	__u32 type = 0;

	if (s->flags & KCSAND_SITE_WRITE) {
		type |= KCSAND_ACCESS_WRITE;
		if (s->flags & KCSAND_SITE_READ)
			type |= KCSAND_ACCESS_COMPOUND;
	}
	if (s->flags & KCSAND_SITE_MARKED)
		type |= KCSAND_ACCESS_ATOMIC;
	return type;
}

/* One probe hit, everything the slow path and the report need about it. */
struct hit {
	void *ctx;
	struct kcsand_cpu_state *percpu;
	struct pt_regs *regs;
	const struct kcsand_site *site;
	__u64 addr;
	__u64 ip;
	/*
	 * The hit's kind, a constant of its program but in_interrupt: each
	 * in an 8-byte slot of its own.  6.1's verifier keeps a constant
	 * spilled to the stack only while nothing else is written to its
	 * 8 bytes; as 4-byte fields side by side, user was unknown to it in
	 * kcsand_uprobe after in_interrupt's store, and every branch on it
	 * (sample_value(), ustack_send_seq(), kernel_stack_addr(), ...) was
	 * walked both ways.
	 */
	__s64 in_interrupt;
	__s64 user;
	__s64 every;		/* a sampled hit: watch it, whatever skip_watch says */
	/*
	 * A kernel code-breakpoint sample (DataCollider's): its watchpoint
	 * takes the other CPUs' data breakpoints (pair.bpf.h), and an
	 * aligned plain write watches too, so that it finds its readers.
	 */
	__s64 pair;
	__u32 site_idx;
	__u32 size;
	__u32 type;
	__u8 acc_flags;		/* KCSAND_ACC_*, for the record */
	/*
	 * The site's ra_off, kept here so that a trap can choose it without
	 * choosing between two sites (hw_ra_off() in bpf/hwbp.bpf.h).
	 */
	__s16 ra_off;
};

/*
 * A kernel trap's frames taken earlier: the trap of a disarmed kprobe's
 * out-of-line copy cannot be unwound from where it stopped, so its probe
 * took them (hw_probed_stack()).
 */
#include "probed_note.bpf.h"

/*
 * Read size bytes at addr into buf (zero-filled).  A failed read is "no
 * sample", never a value of 0: a page not yet faulted in would otherwise
 * look like a value change.
 */
static __always_inline int sample_value(const struct hit *hit, __u64 *buf)
{
	__u32 sz = hit->size;
	int err;

	buf[0] = buf[1] = buf[2] = buf[3] = 0;
	if (sz == 0 || sz > KCSAND_MAX_ACCESS)
		return -1;
	if (hit->user)
		err = bpf_probe_read_user(buf, sz, (void *)hit->addr);
	else
		err = bpf_probe_read_kernel(buf, sz, (void *)hit->addr);
	return err ? -1 : 0;
}

static __always_inline int values_differ(const __u64 *a, const __u64 *b)
{
	return (a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) ? 1 : 0;
}

/* Linux's STACK_END_MAGIC: fork writes it at the lowest word of every task's stack. */
#define KERNEL_STACK_END_MAGIC	0x57AC6E9DULL

/*
 * A kernel access to a kernel stack: its own context's (within a stack's
 * span of the stack pointer it ran with: the task's stack or the CPU's
 * interrupt stack), or any task's, whose base (16 KiB-aligned, as vmalloc'd
 * stacks and init_stack are) holds the magic.  What is there (an escaped
 * local, a callee's out-parameter, a sleeper's on-stack wait entry) gets no
 * data breakpoint: see pair_arm() and hwbp__escalate().  Not inlined: its
 * read's buffer would add to every caller's frame, over 6.1's 512 bytes.
 * Global, of scalars: verified once, where a static function was walked
 * again at each of its callers' states (3,180 of kcsand_hwbp_kernel's
 * 32,385 instructions on 6.1).
 */
__noinline int kernel_stack_at_g(__u64 addr, __u64 sp)
{
	__u64 magic = 0;

	if (addr + KCSAND_KERNEL_STACK_SPAN > sp && addr < sp + KCSAND_KERNEL_STACK_SPAN)
		return 1;
	return !bpf_probe_read_kernel(&magic, sizeof(magic),
				      (void *)(addr & ~(KCSAND_KERNEL_STACK_SPAN - 1))) &&
	       magic == KERNEL_STACK_END_MAGIC;
}

static __always_inline int kernel_stack_addr(const struct hit *hit)
{
	return !hit->user && kernel_stack_at_g(hit->addr, hit->regs->sp);
}

static __always_inline void fill_access(const struct hit *hit, struct kcsand_access *acc)
{
	__u64 id = bpf_get_current_pid_tgid();
	__s16 ra_off = hit->ra_off;
	long n;

	acc->addr = hit->addr;
	acc->ip = hit->ip;
	acc->ra = 0;
	acc->tid = (__u32)id;
	acc->pid = id >> 32;
	acc->cpu = bpf_get_smp_processor_id();
	acc->site = hit->site_idx;
	acc->size = hit->size;
	acc->type = hit->type;
	acc->ctx = hit->in_interrupt ? KCSAND_CTX_INTERRUPT : KCSAND_CTX_TASK;
	acc->flags = hit->acc_flags | (kernel_stack_addr(hit) ? KCSAND_ACC_STACK : 0);
	acc->ustack = 0;	/* the caller's, sent before this record (ustack.bpf.h) */
	bpf_get_current_comm(acc->comm, sizeof(acc->comm));
	if (!hit->user && (hit->acc_flags & KCSAND_ACC_HWBP) && hw_probed_stack(acc))
		return;
	n = bpf_get_stack(hit->ctx, acc->stack, sizeof(acc->stack),
			  hit->user ? BPF_F_USER_STACK : 0);
	acc->nr_frames = n < 0 ? (__s32)n : (__s32)((__u64)n / 8);
	/* The frame-pointer walk skips the caller of a frameless site: keep it aside. */
	if (hit->user && ra_off >= 0)
		bpf_probe_read_user(&acc->ra, sizeof(acc->ra), (void *)(hit->regs->sp + ra_off));
}

struct spin_ctx {
	__u64 deadline;
	/* consumer wait */
	struct slot_info *info;
	__u64 want;
	const struct hit *hit;
	__u64 *old;
	__u64 *cur;
	int changed;
};

/*
 * bpf_loop runs at most 1 << 23 callbacks; eight clock reads a callback put
 * the loop's own end far beyond the longest delay params.c accepts
 * (100,000 µs): the deadline ends the spin (docs/parameters.md).
 */
#define SPIN_MAX_LOOPS		(1 << 23)
#define SPIN_READS		8

static long spin_until_cb(__u64 i, void *data)
{
	struct spin_ctx *spin = data;

	for (int k = 0; k < SPIN_READS; k++)
		if (bpf_ktime_get_ns() >= spin->deadline)
			return 1;
	return 0;
}

/* Busy-wait us µs; 0 when the deadline passed (the loop's bound never ends it first). */
static __always_inline int spin_us(__u32 us)
{
	struct spin_ctx spin = { .deadline = bpf_ktime_get_ns() + (__u64)us * 1000 };

	bpf_loop(SPIN_MAX_LOOPS, spin_until_cb, &spin, 0);
	return bpf_ktime_get_ns() >= spin.deadline ? 0 : -1;
}

/*
 * The consumer publishes its record and only then executes its own access
 * (a probe runs before the instruction).  Wait, bounded, for the record and
 * for the value to change, so that a write that consumed the watchpoint
 * near the end of the stall is still seen as a value change.
 */
static long await_consumer_cb(__u64 i, void *data)
{
	struct spin_ctx *spin = data;
	__u64 now[4];

	if (bpf_ktime_get_ns() >= spin->deadline)
		return 1;
	if (*(volatile __u64 *)&spin->info->ready != spin->want)
		return 0;
	if (sample_value(spin->hit, now) == 0 && values_differ(spin->old, now)) {
		spin->cur[0] = now[0];
		spin->cur[1] = now[1];
		spin->cur[2] = now[2];
		spin->cur[3] = now[3];
		spin->changed = 1;
		return 1;
	}
	/* The consumer may be a read, or write the same value: don't wait long for it. */
	return (spin->info->acc.type & KCSAND_ACCESS_WRITE) ? 0 : 1;
}

static long await_record_cb(__u64 i, void *data)
{
	struct spin_ctx *spin = data;

	return *(volatile __u64 *)&spin->info->ready == spin->want ||
	       bpf_ktime_get_ns() >= spin->deadline;
}

static long await_late_consumer_cb(__u64 i, void *data)
{
	struct spin_ctx *spin = data;

	if (*(volatile __u64 *)&watchpoints[spin->want & (WP_NUM_SLOTS - 1)] & WP_CONSUMED)
		return 1;
	return bpf_ktime_get_ns() >= spin->deadline;
}

static __always_inline void emit_report(const struct hit *hit, struct slot_info *info,
					int has_other, int value_change, int value_valid,
					const __u64 *old, const __u64 *cur)
{
	struct kcsand_report *rec;
	/* Before the report: the daemon must have the copy when the report comes. */
	__u64 ustack = ustack_send_seq(hit->regs, hit->user,
				       hit->acc_flags & KCSAND_ACC_HWBP);

	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		counter_add(KCSAND_CTR_RECORDS_DROPPED, 1);
		return;
	}
	rec->type = KCSAND_REC_REPORT;
	rec->time_ns = bpf_ktime_get_ns();
	rec->value_change = value_change;
	rec->has_other = has_other;
	rec->value_valid = value_valid;
	rec->origin = KCSAND_ORIGIN_WATCHPOINT;
	rec->__pad = 0;
	rec->age_ns = 0;
	for (int i = 0; i < 4; i++) {
		rec->old_value[i] = old[i];
		rec->new_value[i] = cur[i];
	}
	fill_access(hit, &rec->this);
	rec->this.ustack = ustack;
	/*
	 * A helper's copy, as in fill_access(): inlined, the copy's 84 loads
	 * and stores were walked at each of the report's states (12,096 of
	 * kcsand_hwbp_kernel's on the guest's 6.1).
	 */
	if (has_other && info)
		bpf_probe_read_kernel(&rec->other, sizeof(rec->other), &info->acc);
	else
		__builtin_memset(&rec->other, 0, sizeof(rec->other));
	bpf_ringbuf_submit(rec, 0);
}

/* Two accesses race only within one address space: the tgid in user mode, all of it in kernel mode. */
static __always_inline __u32 addr_space(const struct hit *hit)
{
	return hit->user ? bpf_get_current_pid_tgid() >> 32 : 0;
}

static __always_inline __u64 *slot_word(__u32 slot)
{
	return &watchpoints[slot & (WP_NUM_SLOTS - 1)];
}

/*
 * The stall budget: a CPU stalls at most stall_budget_us per second,
 * whatever the rate.  Uprobe programs run preemptibly on kernels that
 * preempt (preempt=full or lazy), so two tasks can share this CPU's state:
 * the window moves by cmpxchg and the stalls add atomically (a stall that
 * ends while another task restarts the window may be lost, one at most).
 */
static __always_inline int stall_allowed(const struct hit *hit, struct kcsand_cpu_state *percpu,
					 __u64 now)
{
	__u64 budget_ns = (__u64)PARAM(stall_budget_us) * 1000;
	__u64 start = *(volatile __u64 *)&percpu->window_start_ns;

	/* Interrupts are off in a kernel stall: "unlimited" is not on offer there. */
	if (!hit->user && (!budget_ns || budget_ns > KCSAND_KERNEL_STALL_BUDGET_MAX_US * 1000ULL))
		budget_ns = KCSAND_KERNEL_STALL_BUDGET_MAX_US * 1000ULL;

	if (now - start >= 1000000000ULL &&
	    __sync_val_compare_and_swap(&percpu->window_start_ns, start, now) == start)
		__sync_lock_test_and_set(&percpu->stalled_ns, 0);
	return !budget_ns || *(volatile __u64 *)&percpu->stalled_ns < budget_ns;
}

/*
 * Take the slot of h's line and arm it.  The slot is reserved first, so
 * that the owner is in place before any consumer can match the watchpoint.
 */
static __always_inline int wp_arm(const struct hit *hit, struct watch *w)
{
	__u64 *word;

	w->slot = wp_slot(hit->addr);
	w->info = bpf_map_lookup_elem(&slot_infos, &w->slot);
	if (!w->info)
		return -1;
	w->t_start = bpf_ktime_get_ns();
	/* A code-breakpoint sample: the CPU still rests from its last stall (include/kcsand.h). */
	if (hit->pair && w->t_start < *(volatile __u64 *)&hit->percpu->rest_until_ns) {
		counter_add(KCSAND_CTR_STALL_RESTS, 1);
		return -1;
	}
	if (!stall_allowed(hit, hit->percpu, w->t_start)) {
		counter_add(KCSAND_CTR_STALL_BUDGET, 1);
		return -1;
	}
	word = slot_word(w->slot);
	if (__sync_val_compare_and_swap(word, 0, WP_RESERVED) != 0) {
		counter_add(KCSAND_CTR_NO_CAPACITY, 1);
		return -1;
	}
	w->gen = __sync_fetch_and_add(&wp_generation, 1);
	w->wp = wp_encode(hit->addr, hit->size, hit->type & KCSAND_ACCESS_WRITE, w->gen);
	w->info->owner = (__u64)w->gen << 32 | addr_space(hit);
	__sync_lock_test_and_set(word, w->wp);
	counter_add(KCSAND_CTR_USED_WATCHPOINTS, 1);
	counter_add(KCSAND_CTR_SETUP_WATCHPOINTS, 1);
	w->old_ok = sample_value(hit, w->old) == 0;
	return 0;
}

/*
 * One wait of a stall, in µs: a kernel watcher waits with interrupts off,
 * so no parameter takes it past the ceiling (include/kcsand.h).
 */
static __always_inline __u32 wait_us(const struct hit *hit, __u32 us)
{
	return !hit->user && us > KCSAND_KERNEL_WAIT_MAX_US ? KCSAND_KERNEL_WAIT_MAX_US : us;
}

/* Stall with the watchpoint armed, then look at the value again. */
static __always_inline void wp_stall(const struct hit *hit, struct watch *w)
{
	__u32 delay = hit->in_interrupt ? PARAM(udelay_interrupt) : PARAM(udelay_task);

	if (wait_us(hit, delay) < delay) {
		delay = wait_us(hit, delay);
		counter_add(KCSAND_CTR_STALLS_CLAMPED, 1);
	}
	if (PARAM(delay_randomize) && delay)
		delay -= bpf_get_prandom_u32() % delay;
	spin_us(delay);

	w->value_change = KCSAND_VALUE_CHANGE_MAYBE;
	w->cur_ok = sample_value(hit, w->cur) == 0;
	if (!w->old_ok || !w->cur_ok || !values_differ(w->old, w->cur))
		return;
	w->value_change = KCSAND_VALUE_CHANGE_TRUE;
	/*
	 * Someone wrote, and nobody has consumed yet.  A locked write is
	 * probed after it executes (uprobes refuse lock prefixes), so its
	 * check can trail its store: keep the watchpoint armed a little
	 * longer before calling the origin unknown.
	 */
	if (!(*(volatile __u64 *)slot_word(w->slot) & WP_CONSUMED)) {
		struct spin_ctx spin = {
			.deadline = bpf_ktime_get_ns() +
				    (__u64)wait_us(hit, PARAM(consumer_wait_us)) * 1000,
			.want = w->slot,
		};

		bpf_loop(1 << 20, await_late_consumer_cb, &spin, 0);
	}
}

/*
 * How long a watcher waits for a consumer that claimed its watchpoint but
 * has not published its record: a uprobe program can be preempted between
 * the two (KCSAN, never preempted there, waits for ever).
 */
#define CONSUMER_PREEMPTED_WAIT_NS	(10 * 1000 * 1000ULL)

/*
 * Wait for the consumer's record: consumer_wait_us for the record and its
 * value change, then up to CONSUMER_PREEMPTED_WAIT_NS for a preempted
 * consumer.  0: the record is there.  -1: the watcher gives the slot up
 * to the consumer, which frees it when it publishes (lost_other counts it).
 */
static __always_inline int wp_await_record(const struct hit *hit, struct watch *w)
{
	struct spin_ctx spin = {
		.deadline = bpf_ktime_get_ns() + (__u64)wait_us(hit, PARAM(consumer_wait_us)) * 1000,
		.info = w->info,
		.want = (__u64)w->gen + 1,
		.hit = hit,
		.old = w->old,
		.cur = w->cur,
	};
	__u64 r;

	bpf_loop(1 << 20, await_consumer_cb, &spin, 0);
	if (spin.changed && w->old_ok)
		w->value_change = KCSAND_VALUE_CHANGE_TRUE;
	if (*(volatile __u64 *)&w->info->ready == spin.want)
		return 0;
	/* A kernel consumer is never preempted between claim and publish: the ceiling will do. */
	spin.deadline = bpf_ktime_get_ns() + (hit->user ? CONSUMER_PREEMPTED_WAIT_NS :
					      KCSAND_KERNEL_WAIT_MAX_US * 1000ULL);
	bpf_loop(1 << 20, await_record_cb, &spin, 0);
	r = *(volatile __u64 *)&w->info->ready;
	if (r == spin.want || __sync_val_compare_and_swap(&w->info->ready, r,
							spin.want | SLOT_ABANDONED) != r)
		return 0;
	counter_add(KCSAND_CTR_LOST_OTHER, 1);
	return -1;
}

/*
 * The watcher's plain load or store, known by the end of its stall for an
 * atomic's (atomics.bpf.h): a lock-prefixed access to its address taught
 * it during the stall, in this process or, in a shared mapping, another.
 * Then a marked consumer or a change of unknown origin is an atomic
 * access against an atomic one, not a race: the watchpoint was set before
 * the rule knew, as at the top of a process's first round of stress-ng's
 * atomic stressor.  A plain consumer still races (a plain RMW: a lost update).
 */
static __always_inline int wp_learned_since(const struct hit *hit, const struct slot_info *info)
{
	if (!hit->user || (info && !(info->acc.type & KCSAND_ACCESS_ATOMIC)))
		return 0;
	return atomic_learned(hit->site, hit->addr);
}

/* Disarm; report a consumed watchpoint before freeing its slot, or a change nobody claimed. */
static __always_inline void wp_disarm(const struct hit *hit, struct watch *w)
{
	__u64 *word = slot_word(w->slot), end;
	int consumed = __sync_val_compare_and_swap(word, w->wp, 0) != w->wp;

	if (consumed && wp_await_record(hit, w) == 0) {
		/* Wider than a word: the value check cannot be trusted, always report (KCSAN). */
		if (hit->size > 8)
			w->value_change = KCSAND_VALUE_CHANGE_TRUE;
		if (hit->user && w->info->acc.pid != (__u32)w->info->owner)
			counter_add(KCSAND_CTR_ENCODING_FALSE_POSITIVES, 1);
		else if (!wp_learned_since(hit, w->info))
			emit_report(hit, w->info, 1, w->value_change, w->old_ok && w->cur_ok,
				    w->old, w->cur);
		else	/* the consumer counted a race that two atomic accesses are not */
			counter_add(KCSAND_CTR_DATA_RACES, -1);
		__sync_lock_test_and_set(word, 0);
	} else if (!consumed && w->value_change == KCSAND_VALUE_CHANGE_TRUE &&
		   !wp_learned_since(hit, NULL)) {
		counter_add(KCSAND_CTR_RACES_UNKNOWN_ORIGIN, 1);
		emit_report(hit, NULL, 0, w->value_change, 1, w->old, w->cur);
	}
	counter_add(KCSAND_CTR_USED_WATCHPOINTS, -1);
	end = bpf_ktime_get_ns();
	__sync_fetch_and_add(&hit->percpu->stalled_ns, end - w->t_start);
	if (hit->pair) {
		/* Its interrupts were off: the CPU gets them back for three times as long. */
		__sync_lock_test_and_set(&hit->percpu->rest_until_ns,
					 end + (end - w->t_start) * KCSAND_KERNEL_STALL_REST);
		counter_add(KCSAND_CTR_KERNEL_STALL_US, (end - w->t_start) / 1000);
	}
	if (!w->old_ok || !w->cur_ok)
		counter_add(KCSAND_CTR_READ_FAULTS, 1);
}

#include "pair.bpf.h"

/* KCSAN's kcsan_setup_watchpoint(): the slow path. */
static __always_inline void setup_watchpoint(const struct hit *hit)
{
	struct watch w = {};
	int paired;

	if (wp_arm(hit, &w))
		return;
	paired = pair_arm(hit);
	wp_stall(hit, &w);
	wp_disarm(hit, &w);
	if (paired)
		pair_release();
}

/* The first half of KCSAN's kcsan_found_watchpoint(): 1 when this access consumed wp. */
static __always_inline int wp_claim(__u32 slot, __u64 wp)
{
	if (__sync_val_compare_and_swap(slot_word(slot), wp, wp | WP_CONSUMED) == wp)
		return 1;
	/* Another consumer, or the watcher disarming: a race between reporters. */
	counter_add(KCSAND_CTR_REPORT_RACES, 1);
	return 0;
}

/* The second half: leave our side for the watcher; free the slot if it gave up on us. */
static __always_inline void wp_publish(const struct hit *hit, __u32 slot, __u32 gen)
{
	struct slot_info *info = bpf_map_lookup_elem(&slot_infos, &slot);
	__u64 want = (__u64)gen + 1;

	if (!info)
		return;
	/* Sent before the watcher can see ready, so before the watcher's report. */
	fill_access(hit, &info->acc);
	info->acc.ustack = ustack_send_seq(hit->regs, hit->user,
					   hit->acc_flags & KCSAND_ACC_HWBP);
	if (__sync_lock_test_and_set(&info->ready, want) == (want | SLOT_ABANDONED))
		__sync_lock_test_and_set(slot_word(slot), 0);
}

static __always_inline void found_watchpoint(const struct hit *hit, __u32 slot, __u64 wp, __u32 gen)
{
	if (wp_claim(slot, wp))
		wp_publish(hit, slot, gen);
	counter_add(KCSAND_CTR_DATA_RACES, 1);
}

/*
 * Is the armed watchpoint wp in slot one of h's address space?  Its owner
 * must be of the same generation (else the slot was re-armed since wp was
 * read), and *gen gets the full generation.
 */
static __always_inline int wp_owned_by_space(const struct hit *hit, __u32 slot, __u64 wp,
					     __u32 *gen)
{
	struct slot_info *info = bpf_map_lookup_elem(&slot_infos, &slot);
	__u64 owner;

	if (!info)
		return 0;
	owner = *(volatile __u64 *)&info->owner;
	*gen = owner >> 32;
	return (*gen & WP_GEN_MASK) == wp_gen(wp) && (__u32)owner == addr_space(hit);
}

static __always_inline int find_watchpoint(const struct hit *hit, __u32 *slot_out, __u64 *wp_out,
					   __u32 *gen_out)
{
	__u32 center = wp_slot(hit->addr);
	int is_write = hit->type & KCSAND_ACCESS_WRITE;

	for (int d = -1; d <= 1; d++) {
		__u32 slot = (center + d) & (WP_NUM_SLOTS - 1);
		__u64 wp = *(volatile __u64 *)&watchpoints[slot];

		if (wp && wp_matches(wp, hit->addr, hit->size, is_write) &&
		    wp_owned_by_space(hit, slot, wp, gen_out)) {
			*slot_out = slot;
			*wp_out = wp;
			return 1;
		}
	}
	return 0;
}

/*
 * KCSAN's is_atomic() for plain accesses, given the live parameters.  A
 * code-breakpoint sample's aligned plain write is not taken for atomic:
 * KCSAN's rule counts on the reader's side watching, and a reader is
 * sampled about as rarely as the writer; the write's data breakpoint on
 * the other CPUs (pair.bpf.h) catches the readers instead.
 */
static __always_inline int treat_as_atomic(const struct hit *hit)
{
	if (hit->type & KCSAND_ACCESS_ATOMIC)
		return 1;
	if (PARAM(assume_plain_writes_atomic) && !hit->pair && hit->type == KCSAND_ACCESS_WRITE &&
	    hit->size <= 8 && !(hit->addr & (hit->size - 1)))
		return 1;
	return 0;
}

/*
 * KCSAN's kcsan_skip countdown, per CPU.  Atomic, because a preemptible
 * uprobe program may share it with another task on this CPU: two tasks
 * that both count past zero both watch, and the later reset wins.
 */
static __always_inline int should_watch(const struct hit *hit, struct kcsand_cpu_state *percpu)
{
	__s64 skip, left;

	if ((hit->site->flags & KCSAND_SITE_NOWATCH) || treat_as_atomic(hit))
		return 0;
	if (hit->every)
		return 1;
	skip = PARAM(skip_watch);
	/*
	 * skip_watch is live (kcsanctl set): a lower value counts from now,
	 * not after the countdown a higher one started (10^9 hits, say).
	 */
	left = *(volatile __s64 *)&percpu->skip;
	if (left > skip)
		__sync_val_compare_and_swap(&percpu->skip, left, skip);
	if (__sync_fetch_and_add(&percpu->skip, -1) > 0)
		return 0;
	if (PARAM(skip_watch_randomize) && skip)
		skip -= bpf_get_prandom_u32() % skip;
	__sync_lock_test_and_set(&percpu->skip, skip);
	return 1;
}

/* The fast path's hit, from the site's decoded operand and the registers. */
static __always_inline int make_hit(struct hit *hit, void *ctx, struct pt_regs *regs,
				    __u32 site_idx, __u64 ip, int user, int in_interrupt)
{
	const struct kcsand_site *site = bpf_map_lookup_elem(&sites, &site_idx);

	if (!site || (site->flags & KCSAND_SITE_DATA_RACE))
		return -1;
	hit->ctx = ctx;
	hit->regs = regs;
	hit->site = site;
	hit->site_idx = site_idx;
	hit->ip = ip - site->probe_delta;
	hit->addr = site_address(site, regs, hit->ip);
	hit->size = site->size;
	hit->type = site_access_type(site);
	hit->in_interrupt = in_interrupt;
	hit->user = user;
	hit->acc_flags = 0;
	hit->ra_off = site->ra_off;
	hit->pair = 0;
	return 0;
}

/*
 * The fast path, every hit: consume a conflicting watchpoint, or count
 * down to the next one to set.  every (CHECK_EVERY): the site sampler
 * already chose this hit (a hot turn on one thread): skip_watch, which
 * spreads KCSAN's cheap instrumented accesses, does not apply to a trap
 * that cost tens of microseconds by itself.  CHECK_PAIR: a kernel
 * code-breakpoint sample (struct hit's pair).
 */
#define CHECK_EVERY	1
#define CHECK_PAIR	2

static __always_inline int kcsand_check_access(void *ctx, struct pt_regs *regs, __u32 site_idx,
					       __u64 ip, int user, int in_interrupt, int every)
{
	struct kcsand_cpu_state *percpu;
	__u32 zero = 0, slot, gen;
	struct hit hit;
	__u64 wp;

	percpu = bpf_map_lookup_elem(&cpu_state, &zero);
	if (!percpu)
		return 0;
	__sync_fetch_and_add(&percpu->hits, 1);
	if (!PARAM(enabled) || make_hit(&hit, ctx, regs, site_idx, ip, user, in_interrupt))
		return 0;
	/* A learned atomic access never races: it neither sets nor consumes a watchpoint. */
	if (user && atomic_learned(hit.site, hit.addr))
		return 0;
	hit.percpu = percpu;
	hit.every = every & CHECK_EVERY;
	hit.pair = !!(every & CHECK_PAIR);

	if (find_watchpoint(&hit, &slot, &wp, &gen))
		found_watchpoint(&hit, slot, wp, gen);
	else if (should_watch(&hit, percpu))
		setup_watchpoint(&hit);
	return 0;
}

#endif

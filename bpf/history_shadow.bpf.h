/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The history detector's shadow: each sampled access checked against the
 * accesses its granule remembers, remembered in turn with its stack; the
 * report of a race; memory forgotten when it changes owner.  Included by
 * history.bpf.h after history_clock.bpf.h.
 */
#ifndef KCSAND_HISTORY_SHADOW_BPF_H
#define KCSAND_HISTORY_SHADOW_BPF_H

/*
 * The hash of stk's nr frames.  A global function: inlined, each of the
 * loop's exits was a state of its own, and the verifier walked what
 * follows (the stack's map, the cell's write) once for each.
 */
__noinline __u64 hb_stack_hash_g(const struct hb_stack *stk, int nr)
{
	__u64 key = 0xcbf29ce484222325ULL;

	if (!stk)
		return 0;
	for (int i = 0; i < KCSAND_MAX_STACK; i++) {
		if (i >= nr)
			break;
		key = (key ^ stk->ip[i]) * 0x100000001b3ULL;
	}
	return key;
}

/*
 * Frames of the current access, kept once per distinct stack; 0 if not
 * kept.  A report comes later, so the copy for the CFI unwind is taken
 * now, once per stack too, and named by the key: scratch->copy_key asks
 * history_access() for it.  Without frame pointers the walk gives the
 * site alone, whatever the callers: sp, the same for the same callers in
 * one thread, tells those stacks apart.  The process is in the key too:
 * the daemon keeps copies by process (struct hb_stack).
 */
static __always_inline __u64 hb_stack_key(void *ctx, struct hb_scratch *scratch)
{
	struct pt_regs *regs = ctx;	/* a perf_event ctx starts with its registers too */
	struct hb_stack *st;
	__u64 key;
	long n;
	int nr;

	n = bpf_get_stack(ctx, scratch->stk.ip, sizeof(scratch->stk.ip), BPF_F_USER_STACK);
	if (n <= 0)
		return 0;
	nr = n / 8;
	scratch->stk.nr = nr;
	scratch->stk.tgid = bpf_get_current_pid_tgid() >> 32;
	key = hb_stack_hash_g(&scratch->stk, nr);
	key = ((key ^ nr) * 0x100000001b3ULL ^ scratch->stk.tgid) * 0x100000001b3ULL;
	key = (key ^ regs->sp) & ~KCSAND_USTACK_SEQ;
	if (!key)
		key = 1;
	st = bpf_map_lookup_elem(&hb_stacks, &key);
	if (!st) {
		scratch->stk.copied = 0;
		if (bpf_map_update_elem(&hb_stacks, &key, &scratch->stk, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&hb_stacks, &key)) {
			hb_count(KCSAND_HB_CTR_NO_STACK);
			return 0;
		}
		st = bpf_map_lookup_elem(&hb_stacks, &key);
	}
	if (st && !st->copied)
		scratch->copy_key = key;
	return key;
}

/*
 * The copy of a remembered stack, for the CFI unwind of a report that
 * may come later (ustack.bpf.h): once per stack, while the ring buffer
 * has room.
 */
static __always_inline void hb_stack_copy(struct pt_regs *regs, __u64 key)
{
	struct hb_stack *st;

	if (!ustack_room() || !ustack_send(regs, key, 0))
		return;
	st = bpf_map_lookup_elem(&hb_stacks, &key);
	if (st)
		st->copied = 1;
}

/* Once per HB_REPORT_GAP_NS for a pair of sites: the daemon dedups, the ring need not carry them. */
static __always_inline int hb_report_due(__u32 other_site, __u32 this_site, __u64 now)
{
	struct hb_pair pair = { .a = other_site, .b = this_site };
	__u64 *last = bpf_map_lookup_elem(&hb_reported, &pair);

	if (last && now - *last < HB_REPORT_GAP_NS)
		return 0;
	bpf_map_update_elem(&hb_reported, &pair, &now, BPF_ANY);
	return 1;
}

/* The report: this access as a watchpoint consumer would fill it, the remembered one as it was. */
static __noinline void hb_report(void *ctx, const struct hb_scratch *scratch, __u32 tgid)
{
	const struct hb_access *a = &scratch->acc;
	const struct hb_cell *o = &scratch->found;
	struct kcsand_report *rec;
	const struct hb_stack *st;
	__u64 id = bpf_get_current_pid_tgid();
	long n;

	rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
	if (!rec) {
		counter_add(KCSAND_CTR_RECORDS_DROPPED, 1);
		return;
	}
	__builtin_memset(rec, 0, offsetof(struct kcsand_report, this));
	rec->type = KCSAND_REC_REPORT;
	/* No value was sampled: the pair itself is the evidence. */
	rec->value_change = KCSAND_VALUE_CHANGE_TRUE;
	rec->has_other = 1;
	rec->origin = KCSAND_ORIGIN_HISTORY;
	rec->age_ns = scratch->now - o->time_ns;

	/* This side, as fill_access() would (a struct hit does not fit on the stack here). */
	__builtin_memset(&rec->this, 0, offsetof(struct kcsand_access, stack));
	rec->this.addr = a->addr;
	rec->this.ip = a->ip;
	rec->this.tid = (__u32)id;
	rec->this.pid = id >> 32;
	rec->this.cpu = bpf_get_smp_processor_id();
	rec->this.site = a->site_idx;
	rec->this.size = a->size;
	rec->this.type = a->type & HB_TYPE_ACCESS;
	rec->this.flags = a->flags;
	rec->this.ra = a->ra;
	rec->this.ustack = a->ustack;
	bpf_get_current_comm(rec->this.comm, sizeof(rec->this.comm));
	n = bpf_get_stack(ctx, rec->this.stack, sizeof(rec->this.stack), BPF_F_USER_STACK);
	rec->this.nr_frames = n < 0 ? (__s32)n : (__s32)((__u64)n / 8);

	__builtin_memset(&rec->other, 0, offsetof(struct kcsand_access, stack));
	rec->other.addr = (scratch->found_granule << 3) + o->off;
	rec->other.ip = o->ip;
	rec->other.ra = o->ra;
	rec->other.tid = o->tid;
	rec->other.pid = tgid;
	rec->other.cpu = o->cpu;
	rec->other.site = o->site;
	rec->other.size = o->size;
	rec->other.type = o->type & HB_TYPE_ACCESS;
	rec->other.flags = o->type & HB_TYPE_HW_RAW ? KCSAND_ACC_HWBP : 0;
	/* Its copy went out when it was remembered, if the ring buffer had room then. */
	rec->other.ustack = o->stack_key;
	st = o->stack_key ? bpf_map_lookup_elem(&hb_stacks, &o->stack_key) : NULL;
	if (st) {
		__builtin_memcpy(rec->other.stack, st->ip, sizeof(rec->other.stack));
		rec->other.nr_frames = st->nr;
	} else {
		rec->other.stack[0] = o->ip;
		rec->other.nr_frames = 1;
	}
	bpf_ringbuf_submit(rec, 0);
	hb_count(KCSAND_HB_CTR_REPORTS);
}

/* The bytes of granule g that an access of size bytes at addr touches (it touches g). */
static __always_inline __u8 hb_mask(__u64 addr, __u32 size, __u64 g)
{
	__u64 lo = addr > g << 3 ? addr : g << 3, hi = addr + size;

	if (hi > (g << 3) + 8)
		hi = (g << 3) + 8;
	return (__u8)(((1u << (hi - lo)) - 1) << (lo & 7));
}

static __always_inline __u32 hb_shadow_index(__u32 tgid, __u64 granule)
{
	__u64 hash = (granule ^ ((__u64)tgid << 40)) * 0x9e3779b97f4a7c15ULL;

	return hash >> (64 - HB_SHADOW_BITS);
}

/*
 * Take a shadow entry.  It is busy when another thread checks an access
 * to the same granule at the same moment, which is the very race the
 * entry is there to find: the holder captures a stack, microseconds, so
 * the wait is that long, not a few tries (32 lost the second add_to_total()
 * of tests/history/racy_omp_missing_critical.c in 6 runs of 12).  A sample
 * that still cannot take it is skipped, and counted.
 */
#define HB_LOCK_TRIES	(1 << 16)

struct hb_lock_try {
	struct hb_shadow *e;
	__u32 seq;
	int ok;
};

static long hb_lock_try(__u32 i, void *ctx)
{
	struct hb_lock_try *l = ctx;
	struct hb_shadow *e = l->e;
	__u32 s;

	if (!e)
		return 1;
	s = *(volatile __u32 *)&e->seq;
	if (!(s & 1) && __sync_val_compare_and_swap(&e->seq, s, s + 1) == s) {
		l->seq = s;
		l->ok = 1;
		return 1;
	}
	return 0;
}

/* bpf_loop(): the verifier walks the try once, however many there are. */
static __always_inline int hb_entry_lock(struct hb_shadow *e, __u32 *seq)
{
	struct hb_lock_try l = { .e = e };

	bpf_loop(HB_LOCK_TRIES, hb_lock_try, &l, 0);
	if (l.ok) {
		*seq = l.seq;
		return 1;
	}
	hb_count(KCSAND_HB_CTR_CONTENDED);
	return 0;
}

/*
 * Whether a remembered access of another thread, not ordered before this
 * one, races with it.  KCSAN's rules: a write on either side, and not both
 * marked.  A plain load or store that a lock or xchg later showed to be an
 * atomic's (the same address, bpf/atomics.bpf.h) was an atomic access
 * made before the rule knew it: hb_cell's HB_TYPE_*.
 */
static __always_inline int hb_conflict(const struct hb_cell *c, const struct hb_access *a,
				       __u8 mask)
{
	__u32 type = a->type;

	if (!(c->mask & mask) || !((c->type | type) & KCSAND_ACCESS_WRITE))
		return 0;
	if (c->type & type & KCSAND_ACCESS_ATOMIC)
		return 0;
	if ((((c->type & HB_TYPE_LEARNABLE) && (type & HB_TYPE_INFERRED)) ||
	     ((c->type & HB_TYPE_INFERRED) && (type & HB_TYPE_LEARNABLE))) &&
	    (a->granule << 3) + c->off == a->addr)
		return 0;
	return 1;
}

/*
 * An acquire of an atomic whose address was taught (an inferred load) that
 * finds another thread's plain store at that very address, made before the
 * address was taught: hb_conflict() excuses the pair as an atomic's, so the
 * store was the atomic's store, and on x86 a release store is that plain
 * mov.  The load takes the store's epoch, as it would have from the
 * store's release: without it, the data a flag published in the first
 * round, before any spin-wait load taught the flag (sites/spinwait.c), is
 * paired.  The epoch also covers what the storer did after the store
 * until its next release: more order, never less.
 */
static __always_inline int hb_store_before_taught(const struct hb_cell *c,
						  const struct hb_access *a)
{
	return (a->type & HB_TYPE_INFERRED) && !(a->type & KCSAND_ACCESS_WRITE) &&
	       (c->type & HB_TYPE_LEARNABLE) && (c->type & KCSAND_ACCESS_WRITE) &&
	       (a->granule << 3) + c->off == a->addr;
}

/*
 * A plain access made at the very address an atomic's access (a teaching
 * one, or one learned) now makes: its site is that atomic's too, though the
 * sampler may have backed it off before the address was ever taught, and
 * then no hit of it would learn it.  Another thread's load there (a poll
 * that began before the atomic's first release: a worker waiting for its
 * first job) may go on unprobed until the engine arms it, so its object
 * goes in the ring (atomic_learn_publish()); a thread's own is a poll
 * that ended, or one of the loop that taught the address.
 */
static __always_inline void hb_learn_cell(const struct hb_cell *c, const struct hb_access *a,
					  __u32 me)
{
	if ((a->type & HB_TYPE_INFERRED) && (c->type & HB_TYPE_LEARNABLE) &&
	    (a->granule << 3) + c->off == a->addr)
		atomic_site_learned(c->site, a->addr & ~7ULL,
				    !(c->type & KCSAND_ACCESS_WRITE) &&
				    ((c->slot1 - 1) & (HB_SLOTS - 1)) != me);
}

/*
 * Reads kept against other granules.  The shadow is direct-mapped: a
 * granule that maps onto a taken entry takes it over.  A parallel loop's
 * neighbouring chunks race at their boundary: the reader reads the last
 * element of its neighbour's chunk once, at its start, and the neighbour
 * writes it in its last iteration, after both threads have touched every
 * other granule of their chunks (DataRaceBench's DRB031 and 032: half a
 * million each, eight times the shadow).  By then the read's entry had
 * been taken over, and with every site armed the write found nothing
 * (DRB032 ran 54 s, no report).  TSan's shadow has room for every granule;
 * here the read that such a write races with is kept instead: a plain
 * read of a granule whose shadow had nothing of anyone's but reads (the
 * same reads hb_watch_offer_g() offers), among the first HB_KEEP_READS of
 * its thread's epoch.  While its thread has not released since (its
 * slot's clock still the read's epoch), another granule's access that
 * maps onto its entry is checked against nothing, as a taken-over entry
 * would be, and not remembered (counted): a race may be lost there, none
 * is made up.  After the reader's release, a write ordered after it is no
 * race, and one that is not was still checked while it was kept.  The
 * bound: HB_KEEP_READS entries per thread and epoch, 4,096 (6% of the
 * shadow) with 64 threads that never release.
 */
#define HB_KEEP_READS	64

/*
 * Whether e, another granule's, keeps a read whose thread has not released
 * since.  Its process's clocks are looked up only for an entry with a kept
 * read: every other entry taken over pays the loop over its cells alone.
 */
static __always_inline int hb_kept(const struct hb_shadow *e)
{
	struct hb_proc *p = NULL;
	__u32 tgid = e->tgid;

	for (int i = 0; i < HB_CELLS; i++) {
		const struct hb_cell *c = &e->cell[i];

		if (!c->slot1 || !(c->type & HB_TYPE_KEEP))
			continue;
		if (!p)
			p = bpf_map_lookup_elem(&hb_procs, &tgid);
		if (!p)
			return 0;
		if (c->clock >= hb_slot_clock(p, (c->slot1 - 1) & (HB_SLOTS - 1)))
			return 1;
	}
	return 0;
}

/*
 * The entry of the granule being checked, made its own (its cells of
 * another granule, or of an older generation, forgotten); the bytes the
 * access touches in it, and the time, for hb_check().  1, and the entry
 * left as it is, when it keeps another granule's read (hb_kept()).
 */
static __always_inline int hb_claim(struct hb_shadow *e, __u32 tgid, struct hb_scratch *scratch)
{
	__u64 granule = scratch->acc.granule;

	scratch->now = bpf_ktime_get_ns();
	scratch->mask = hb_mask(scratch->acc.addr, scratch->acc.size, granule);
	if (e->tgid == tgid && e->granule == granule && e->gen == hb_gen)
		return 0;
	if (e->tgid && e->gen == hb_gen && hb_kept(e)) {
		hb_count(KCSAND_HB_CTR_KEPT);
		return 1;
	}
	hb_count(e->tgid && e->gen == hb_gen ? KCSAND_HB_CTR_SHADOW_EVICTED :
					       KCSAND_HB_CTR_SHADOW_LIVE);
	e->tgid = tgid;
	e->granule = granule;
	e->gen = hb_gen;
	for (int i = 0; i < HB_CELLS; i++)
		e->cell[i].slot1 = 0;
	return 0;
}

/*
 * Claim the entry (hb_claim), then find where the access goes in it, and
 * the first race.  A global function, verified once: inlined, its branches times the
 * granules of hb_access_granules() passed the verifier's million
 * instructions.  scratch->mask: the bytes of the granule the access touches.
 */
__noinline int hb_scan_g(struct hb_shadow *e, struct hb_thread *t, struct hb_scratch *scratch)
{
	struct hb_scan *r;
	__u32 type, me;
	__u8 mask;

	if (!e || !t || !scratch)
		return 0;
	r = &scratch->scan;
	r->own = r->free = r->old = r->mine = r->other_read = -1;
	r->race = 0;
	r->kept = hb_claim(e, t->tgid, scratch);
	if (r->kept)
		return 0;
	type = scratch->acc.type;
	mask = scratch->mask;
	me = t->slot & (HB_SLOTS - 1);

	for (int i = 0; i < HB_CELLS; i++) {
		struct hb_cell *c = &e->cell[i];
		__u32 s;

		if (!c->slot1) {
			if (r->free < 0)
				r->free = i;
			continue;
		}
		hb_learn_cell(c, &scratch->acc, me);
		s = (c->slot1 - 1) & (HB_SLOTS - 1);
		if (s == me) {
			/*
			 * Our own, replaced by this access only if it stands for
			 * it: the same bytes or more, a write for a read, and a
			 * plain access for a marked one.
			 */
			if (r->own < 0 && !(c->mask & ~mask) &&
			    (!(c->type & KCSAND_ACCESS_WRITE) || (type & KCSAND_ACCESS_WRITE)) &&
			    (!(type & KCSAND_ACCESS_ATOMIC) || (c->type & KCSAND_ACCESS_ATOMIC)))
				r->own = i;
			else if (r->mine < 0)
				r->mine = i;
			continue;
		}
		if (c->clock <= t->vc[s]) {
			if (r->old < 0)
				r->old = i;
			continue;
		}
		if (!r->race && hb_conflict(c, &scratch->acc, mask)) {
			scratch->found = *c;
			scratch->found_granule = scratch->acc.granule;
			r->race = 1;
		} else if (hb_store_before_taught(c, &scratch->acc)) {
			t->vc[s] = c->clock;
		}
		if (!(c->type & KCSAND_ACCESS_WRITE) && r->other_read < 0)
			r->other_read = i;
	}
	return 0;
}

/* The shadow entry of an access's granule, taken (hb_entry_lock), or NULL. */
static __always_inline struct hb_shadow *hb_shadow_take(const struct hb_access *a, __u32 tgid,
							__u32 *seq)
{
	__u32 idx = hb_shadow_index(tgid, a->granule);
	struct hb_shadow *e = bpf_map_lookup_elem(&hb_shadow, &idx);

	return e && hb_entry_lock(e, seq) ? e : NULL;
}

/*
 * *v = max(*v, ns), against other threads doing the same.  A global
 * function, verified once: inlined, its eight tries were walked again at
 * each of its calls, in each of hb_forget_wide()'s range turns (4,991 of
 * kcsand_hb_entry's 61,319 instructions on 6.18).
 */
__noinline int hb_max_ns_g(__u64 *v, __u64 ns)
{
	if (!v)
		return 0;
	for (int r = 0; r < 8; r++) {
		__u64 old = *(volatile __u64 *)v;

		if (old >= ns || __sync_val_compare_and_swap(v, old, ns) == old)
			return 0;
	}
	/* Eight other writers in between, each raising it: a plain store, counted. */
	hb_count(KCSAND_HB_CTR_FORGET_ALL);
	*(volatile __u64 *)v = ns;
	return 0;
}

/*
 * The time before which the cells of addr's granule are forgotten: the
 * latest wide range over it, or the process's forgot_ns.  A range being
 * written reads as ~0 (hb_forget_wide): in doubt, forgotten.
 */
__noinline __u64 hb_forgotten_g(struct hb_proc *p, __u64 addr)
{
	__u64 ns;

	if (!p)
		return 0;
	ns = *(volatile __u64 *)&p->forgot_ns;
	for (int i = 0; i < HB_RANGES; i++) {
		struct hb_range *r = &p->range[i];
		__u64 rns = *(volatile __u64 *)&r->ns;

		if (rns > ns && addr >= *(volatile __u64 *)&r->lo && addr < *(volatile __u64 *)&r->hi)
			ns = rns;
	}
	return ns;
}

/*
 * Drop the cells of a taken shadow entry that a wide range or forgot_ns
 * forgot.  Before hb_check(): the cells of another granule it would clear
 * anyway, and its own are then its to scan.
 */
__noinline int hb_drop_forgotten_g(struct hb_shadow *e, __u32 tgid, __u64 addr)
{
	struct hb_proc *p = bpf_map_lookup_elem(&hb_procs, &tgid);
	__u64 ns;

	if (!e || !p)
		return 0;
	ns = hb_forgotten_g(p, addr);
	if (!ns)
		return 0;
	for (int i = 0; i < HB_CELLS; i++)
		if (e->cell[i].slot1 && e->cell[i].time_ns < ns)
			e->cell[i].slot1 = 0;
	return 0;
}

/*
 * A wide range forgotten now: the same range again (a cached thread stack
 * given to the next thread) moves its time; another pushes out the one
 * forgotten longest ago, whose time becomes the process's forgot_ns.  By
 * time, not by turn: a range pushed out by turn may have had its time
 * moved just now (a stack forgotten at its thread's start and again at
 * its end), and forgot_ns then jumped to now, forgetting every access of
 * the process.  racy_many_threads (100 threads, then a pair whose threads
 * start and end between its two stores) lost its pair that way in a CI
 * run, 3 tries of 3, and 1 run in 6 here.  Its fields are written ns
 * first, as ~0, so that a check meanwhile forgets more, never less; x86
 * keeps stores in order.  Two forgets that pick the same least range:
 * the compare-and-swap gives it to one, the other takes the next by turn.
 */
/*
 * Which of p's ranges was forgotten longest ago.  A global function: 6.1's
 * verifier sees its loop once, not in every caller's states (inline, the
 * least so far and its index made kcsand_hb_entry too long to verify).
 */
__noinline __u32 hb_least_range(struct hb_proc *p)
{
	__u64 least = ~0ULL;
	__u32 at = 0;

	if (!p)
		return 0;
	for (__u32 i = 0; i < HB_RANGES; i++) {
		__u64 rns = *(volatile __u64 *)&p->range[i].ns;

		if (rns < least) {
			least = rns;
			at = i;
		}
	}
	return at;
}

/*
 * Which of p's ranges is [lo, hi), or -1.  A global function, for its
 * loop to be verified once: in hb_forget_wide(), each of its 32 turns took
 * the found range's update with it (5,629 of kcsand_hb_entry's
 * instructions on 6.18).
 */
__noinline int hb_range_find_g(struct hb_proc *p, __u64 lo, __u64 hi)
{
	if (!p)
		return -1;
	for (int i = 0; i < HB_RANGES; i++)
		if (p->range[i].lo == lo && p->range[i].hi == hi)
			return i;
	return -1;
}

static __noinline void hb_forget_wide(__u32 tgid, __u64 lo, __u64 hi, __u64 now)
{
	struct hb_proc *p = bpf_map_lookup_elem(&hb_procs, &tgid);
	struct hb_range *r;
	__u64 old;
	int i;

	hb_count(KCSAND_HB_CTR_FORGET_WIDE);
	if (!p)
		return;		/* no thread of it has a clock yet: nothing remembered */
	i = hb_range_find_g(p, lo, hi);
	if (i >= 0) {
		r = &p->range[i & (HB_RANGES - 1)];
		hb_max_ns_g(&r->ns, now);
		/* Pushed out meanwhile by another range: forget everything before now. */
		if (*(volatile __u64 *)&r->lo != lo || *(volatile __u64 *)&r->hi != hi)
			hb_max_ns_g(&p->forgot_ns, now);
		return;
	}
	r = &p->range[hb_least_range(p) & (HB_RANGES - 1)];
	old = *(volatile __u64 *)&r->ns;
	if (old == ~0ULL || __sync_val_compare_and_swap(&r->ns, old, ~0ULL) != old) {
		r = &p->range[__sync_fetch_and_add(&p->next_range, 1) & (HB_RANGES - 1)];
		old = *(volatile __u64 *)&r->ns;
		*(volatile __u64 *)&r->ns = ~0ULL;
	}
	if (old) {
		hb_count(KCSAND_HB_CTR_FORGET_ALL);
		hb_max_ns_g(&p->forgot_ns, old == ~0ULL ? now : old);
	}
	*(volatile __u64 *)&r->lo = lo;
	*(volatile __u64 *)&r->hi = hi;
	*(volatile __u64 *)&r->ns = now;
}

static __always_inline __u64 hb_region_tag(__u32 tgid, __u64 region)
{
	/* A user address has 47 bits, a region 38, a tgid at most 22 (PID_MAX_LIMIT). */
	return region << 22 | (tgid & ((1U << 22) - 1));
}

static __always_inline struct hb_region *hb_region_of(__u32 tgid, __u64 region)
{
	__u32 idx = ((region ^ ((__u64)tgid << 40)) * 0x9e3779b97f4a7c15ULL) >> (64 - HB_REGION_BITS);

	return bpf_map_lookup_elem(&hb_regions, &idx);
}

/*
 * A cell of granule may be written next (hb_check): its region's bit is
 * set first, so that a forget after the write sees it.  A slot another
 * region holds becomes SHARED: every move of a tag is to SHARED, but the
 * first, from 0, which a compare-and-swap makes once.  A global function:
 * in hb_check() its frame passed the 512 bytes of stack.
 */
__noinline int hb_region_note_g(__u32 tgid, __u64 granule)
{
	__u64 tag = hb_region_tag(tgid, granule >> 6), bit = 1ULL << (granule & 63), t;
	struct hb_region *r = hb_region_of(tgid, granule >> 6);

	if (!r)
		return 0;
	t = *(volatile __u64 *)&r->tag;
	if (!t) {
		t = __sync_val_compare_and_swap(&r->tag, 0, tag);
		if (!t)
			t = tag;
	}
	if (t == tag) {
		if (!(*(volatile __u64 *)&r->bits & bit))
			__sync_fetch_and_or(&r->bits, bit);
	} else if (t != HB_REGION_SHARED) {
		*(volatile __u64 *)&r->tag = HB_REGION_SHARED;
	}
	return 0;
}

struct hb_clear {
	__u64 granule;		/* the first */
	__u64 end;		/* one past the last */
	__u64 base;		/* the first granule of the region being cleared */
	__u64 bits;		/* its granules to clear */
	__u32 tgid;
	int busy;		/* an entry could not be taken: left to a wide range */
};

/*
 * Granule's shadow entry, if it holds the granule, emptied; 1 if the entry
 * could not be taken.  A global function, verified once: in the callback
 * below, which 6.18's verifier walks until its state converges, its body
 * was walked again at every step of that walk (docs/PERFORMANCE.md).
 */
__noinline int hb_clear_granule_g(__u32 tgid, __u64 granule)
{
	__u32 idx = hb_shadow_index(tgid, granule), seq;
	struct hb_shadow *e = bpf_map_lookup_elem(&hb_shadow, &idx);

	if (!e || e->tgid != tgid || e->granule != granule || e->gen != hb_gen)
		return 0;
	seq = *(volatile __u32 *)&e->seq;
	if ((seq & 1) || __sync_val_compare_and_swap(&e->seq, seq, seq + 1) != seq)
		return 1;
	if (e->tgid == tgid && e->granule == granule)
		for (int k = 0; k < HB_CELLS; k++)
			e->cell[k].slot1 = 0;
	__sync_lock_test_and_set(&e->seq, seq + 2);
	return 0;
}

/* The next granule of c->bits, cleared. */
static long hb_clear_one(__u32 i, void *ctx)
{
	struct hb_clear *c = ctx;
	__u64 granule;

	if (!c->bits)
		return 1;
	granule = c->base + hb_lowest_bit(c->bits);
	c->bits &= c->bits - 1;
	if (hb_clear_granule_g(c->tgid, granule)) {
		c->busy = 1;
		return 1;
	}
	return 0;
}

/*
 * Region region of the narrow range [first, end) of granules: the
 * granules its slot says may have cells, or all of them in a SHARED slot,
 * cleared; none in a slot never used.  Its bits are cleared after the
 * entries: an access to memory being freed (a use after free) may leave a
 * cell unseen, no other access can.  Returns 0 to go on, 1 past the
 * range's end, HB_CLEAR_BUSY when an entry could not be taken.  A global
 * function, as hb_clear_granule_g() is: the callback below calls it.
 */
#define HB_CLEAR_BUSY	2

__noinline int hb_clear_region_g(__u32 tgid, __u64 first, __u64 end, __u64 region)
{
	__u64 base = region << 6, m, t;
	__u64 lo = first > base ? first : base;
	__u64 hi = end < base + 64 ? end : base + 64;
	struct hb_region *r = hb_region_of(tgid, region);
	struct hb_clear c = { .base = base, .tgid = tgid };

	if (lo >= hi)
		return 1;
	t = r ? *(volatile __u64 *)&r->tag : HB_REGION_SHARED;
	if (!t)
		return 0;
	/* Granules lo to hi - 1 of the region. */
	m = (~0ULL >> (63 - ((hi - 1) & 63))) & (~0ULL << (lo & 63));
	if (r && t == hb_region_tag(tgid, region))
		m &= *(volatile __u64 *)&r->bits;
	else
		t = 0;
	if (!m)
		return 0;
	c.bits = m;
	bpf_loop(64, hb_clear_one, &c, 0);	/* one call a bit set */
	if (c.busy)
		return HB_CLEAR_BUSY;
	if (r && t)
		__sync_fetch_and_and(&r->bits, ~m);
	return 0;
}

/* Region i of c's range, cleared. */
static long hb_clear_region(__u32 i, void *ctx)
{
	struct hb_clear *c = ctx;
	int ret = hb_clear_region_g(c->tgid, c->granule, c->end, (c->granule >> 6) + i);

	if (ret == HB_CLEAR_BUSY)
		c->busy = 1;
	return ret != 0;
}

/* bpf/history_watch.bpf.h: the watches of reads in memory that changed owner, spent. */
static __always_inline void hb_watch_forget(__u64 lo, __u64 hi);

/* Forget what was remembered of [lo, hi) in process tgid, and stop watching it. */
__noinline int hb_forget(__u32 tgid, __u64 lo, __u64 hi)
{
	struct hb_clear c = { .granule = lo >> 3, .end = (hi + 7) >> 3, .tgid = tgid };
	__u64 n = ((hi + 7) >> 3) - (lo >> 3);

	if (hi <= lo)
		return 0;
	hb_count(KCSAND_HB_CTR_FORGET_OPS);
	hb_forget_syncs(tgid, lo, hi);
	hb_watch_forget(lo, hi);
	if (n <= HB_FORGET_CLEAR) {
		bpf_loop(((c.end - 1) >> 6) - (c.granule >> 6) + 1, hb_clear_region, &c, 0);
		if (!c.busy)
			return 0;
	}
	hb_forget_wide(tgid, lo, hi, bpf_ktime_get_ns());
	return 0;
}

/*
 * Check one access against the remembered ones of one of its granules
 * (scratch->acc.granule), in its entry e that the caller took (seq: the
 * entry's sequence before),
 * and remember it, with its stack unless this site already is in this
 * epoch.  The caller takes the entry: its bpf_loop() callback is a frame
 * of its own to 6.1's verifier, and on top of this function's the frames
 * passed the 512 bytes of stack that a whole call chain may use.
 */
/*
 * The cell this access takes when none is its own, free or ordered before
 * it: another of this thread's (an earlier access of the same thread, in
 * program order before this one) rather than another thread's, whose
 * unordered cell is a race waiting for this thread's next access to the
 * granule; and of those, a read, which conflicts with writes only.  A
 * random pick (TSan's) lost, in 1 of 4 runs of DataRaceBench's DRB009, the
 * worker's store to a block whose other half the main thread had written
 * and then read: the read took the store's cell, and the main thread's
 * own store that followed found no race.
 */
static __always_inline int hb_victim(const struct hb_scan *r)
{
	if (r->own >= 0)
		return r->own;
	if (r->free >= 0)
		return r->free;
	if (r->old >= 0)
		return r->old;
	if (r->mine >= 0)
		return r->mine;
	if (r->other_read >= 0)
		return r->other_read;
	return (int)(bpf_get_prandom_u32() % HB_CELLS);
}

/*
 * This access's cell in e, chosen (scratch->victim): 1 if it is to be
 * written, 0 if the thread's own cell already says it all.  A marked
 * access of the site this thread's cell already has keeps that cell's
 * stack: a lock word is hit at every lock and unlock, each a new epoch,
 * and a walk each made a static program's 200,000 mutex rounds run twice
 * as long.
 *
 * hb_check() was one static function, walked again by the verifier for
 * each granule of the caller's loop and each answer before it (6,216 of
 * kcsand_uprobe_multi's instructions on 6.18).  Two global functions now,
 * each verified once; the stack's key, which needs the program's context
 * (not a global function's argument here: its type differs between
 * uprobes and perf events), is walked between them, by the caller.
 */
__noinline int hb_cell_choose_g(struct hb_scratch *scratch, const struct hb_thread *t,
				const struct hb_shadow *e)
{
	const struct hb_scan *r;
	const struct hb_cell *c;
	__u32 clock;

	if (!scratch || !t || !e)
		return 0;
	r = &scratch->scan;
	if (r->kept)
		return 0;
	clock = t->vc[t->slot & (HB_SLOTS - 1)];
	scratch->victim = hb_victim(r) & (HB_CELLS - 1);
	c = &e->cell[scratch->victim & (HB_CELLS - 1)];
	if (r->own >= 0 && c->site == scratch->acc.site_idx && c->clock == clock &&
	    c->mask == scratch->mask)
		return 0;
	if (r->own >= 0 && c->site == scratch->acc.site_idx &&
	    (scratch->acc.type & KCSAND_ACCESS_ATOMIC) && scratch->stack_key == ~0ULL)
		scratch->stack_key = c->stack_key;
	return 1;
}

/*
 * HB_TYPE_KEEP for a plain read of a granule the shadow had nothing of
 * (hb_watch_offer_g()'s reads), among the first HB_KEEP_READS of the
 * thread's epoch (hb_kept()), or for one that takes the place of its
 * thread's own kept read (was: the type of the cell it takes); else 0.
 */
static __always_inline __u32 hb_keep_read(const struct hb_scratch *scratch, struct hb_thread *t,
					  __u32 me, __u32 was)
{
	const struct hb_scan *r = &scratch->scan;

	if (scratch->acc.type & (KCSAND_ACCESS_WRITE | KCSAND_ACCESS_ATOMIC))
		return 0;
	if (r->own >= 0 && (was & HB_TYPE_KEEP))
		return HB_TYPE_KEEP;
	if (r->race || r->own >= 0 || r->mine >= 0 || r->old >= 0)
		return 0;
	if (t->keep_clock != t->vc[me]) {
		t->keep_clock = t->vc[me];
		t->keep_n = 0;
	}
	if (t->keep_n >= HB_KEEP_READS)
		return 0;
	t->keep_n++;
	return HB_TYPE_KEEP;
}

/*
 * The chosen cell written (when write), the entry given back (seq + 2),
 * the race counted; returns whether there is one.
 */
__noinline int hb_cell_write_g(struct hb_scratch *scratch, struct hb_thread *t,
			       struct hb_shadow *e, __u32 seq, int write)
{
	const struct hb_access *a;
	struct hb_cell *c;
	__u32 me, keep;

	if (!scratch || !t || !e)
		return 0;
	a = &scratch->acc;
	me = t->slot & (HB_SLOTS - 1);
	if (write) {
		c = &e->cell[scratch->victim & (HB_CELLS - 1)];
		keep = hb_keep_read(scratch, t, me, c->slot1 ? c->type : 0);
		c->ip = a->ip;
		c->ra = a->ra;
		c->stack_key = scratch->stack_key;
		c->time_ns = scratch->now;
		c->tid = (__u32)bpf_get_current_pid_tgid();
		c->clock = t->vc[me];
		c->site = a->site_idx;
		c->slot1 = me + 1;
		c->cpu = bpf_get_smp_processor_id();
		c->mask = scratch->mask;
		c->type = a->type | keep;
		c->size = a->size;
		c->off = (__s8)(a->addr - (a->granule << 3));
	}
	__sync_lock_test_and_set(&e->seq, seq + 2);
	if (scratch->scan.race)
		hb_count(KCSAND_HB_CTR_RACES);
	return scratch->scan.race != 0;
}

/* Not inlined: the key's walk on the caller's frame passed the 512 bytes of stack. */
static __noinline int hb_check(void *ctx, struct hb_scratch *scratch, struct hb_thread *t,
			       struct hb_shadow *e, __u32 seq)
{
	int write = hb_cell_choose_g(scratch, t, e);

	if (write && scratch->stack_key == ~0ULL)
		scratch->stack_key = hb_stack_key(ctx, scratch);
	return hb_cell_write_g(scratch, t, e, seq, write);
}

/*
 * The granules of an access, each checked and remembered: a 16- or
 * 32-byte vector access, or one that straddles two granules, covers all
 * its bytes.  A race found is kept in scratch->found; returns whether
 * there is one.  A bounded loop, not bpf_loop(): its callback's frame on
 * top of hb_check()'s passed the 512 bytes of stack.
 */
static __always_inline int hb_access_granules(void *ctx, struct hb_scratch *scratch,
					      struct hb_thread *t)
{
	__u64 first = scratch->acc.addr >> 3;
	__u64 last = (scratch->acc.addr + scratch->acc.size - 1) >> 3;
	struct hb_shadow *e;
	int race = 0;
	__u32 seq;

	for (int i = 0; i < (KCSAND_MAX_ACCESS >> 3) + 1; i++) {
		if (first + i > last)
			break;
		scratch->acc.granule = first + i;
		e = hb_shadow_take(&scratch->acc, t->tgid, &seq);
		/* Not from hb_check(): its frame and this one's would pass the 512 bytes. */
		if (!e)
			continue;
		hb_drop_forgotten_g(e, t->tgid, scratch->acc.granule << 3);
		hb_region_note_g(t->tgid, scratch->acc.granule);
		/* Not from hb_check() either: the three frames passed the 512 bytes. */
		hb_scan_g(e, t, scratch);
		/* After a race is found, each granule is still remembered. */
		race |= hb_check(ctx, scratch, t, e, seq);
	}
	return race;
}

/* What scratch->acc says of the access: its site's, and how the rules mark it. */
static __always_inline void hb_access_fill(struct hb_scratch *scratch,
					   const struct kcsand_site *site, __u32 site_idx,
					   struct pt_regs *regs, int learned)
{
	__u32 type = site_access_type(site);

	/*
	 * A lock RMW whose source says relaxed (an OpenMP reduction's combine,
	 * memory_order_relaxed) comes with debug info, which marks the other
	 * atomic accesses of its object: a plain one made before it taught
	 * the address is plain (DRB140: `a = 0` in a `master`, unordered with
	 * another thread's combine).
	 */
	if (learned)
		type |= KCSAND_ACCESS_ATOMIC | HB_TYPE_INFERRED;
	else if ((site->flags & KCSAND_SITE_TEACHES) && site->order != KCSAND_ORDER_RELAXED)
		type |= HB_TYPE_INFERRED;
	else if (!(site->flags & (KCSAND_SITE_MARKED | KCSAND_SITE_SRC_PLAIN)) &&
		 (site->flags & (KCSAND_SITE_READ | KCSAND_SITE_WRITE)) !=
			 (KCSAND_SITE_READ | KCSAND_SITE_WRITE))
		type |= HB_TYPE_LEARNABLE;	/* atomic_learned()'s plain accesses */
	scratch->acc.site_idx = site_idx;
	scratch->acc.size = site->size;
	scratch->acc.type = type;
	scratch->acc.ra = 0;
	scratch->acc.flags = 0;
	if (site->ra_off >= 0)
		bpf_probe_read_user(&scratch->acc.ra, sizeof(scratch->acc.ra),
				    (void *)(regs->sp + site->ra_off));
	scratch->copy_key = 0;
	scratch->stack_key = ~0ULL;
}

/* The thread's acquire of obj pushed out of its last ones, if it is in (ns, until). */
static __noinline int hb_acq_spilled(const struct hb_thread *t, __u64 obj, __u64 ns, __u64 until)
{
	struct hb_acq_key k = {};
	__u64 *at;

	if (!t)
		return 0;
	k.tgid = t->tgid;
	k.slot = t->slot;
	k.addr = obj;
	at = bpf_map_lookup_elem(&hb_acq_spill, &k);
	return at && *at > ns && *at < until;
}

/*
 * Whether the thread acquired obj after ns (hb_acq_note()), and not after
 * until; or did so before a later acquire of it, or before it was pushed
 * out of the last ones (hb_acq_spill): an acquire in the window either way.
 */
static __always_inline int hb_acquired_in(const struct hb_thread *t, __u64 obj, __u64 ns,
					  __u64 until)
{
	for (int j = 0; j < HB_ACQS; j++)
		if (t->acq[j].addr == obj && t->acq[j].ns > ns && t->acq[j].ns < until)
			return 1;
	return hb_acq_spilled(t, obj, ns, until);
}

/* A late release of the other thread published since this one's acquire of its object. */
static __always_inline __u32 hb_inflight_published(const struct hb_thread *t,
						    const struct hb_thread *other, __u32 clock)
{
	for (int i = 0; i < HB_LATE; i++) {
		const struct hb_late *l = &other->late[i];

		if (l->addr && l->clock >= clock && hb_acquired_in(t, l->addr, l->from_ns, l->ns))
			return l->clock;
	}
	return 0;
}

/* Per CPU: another thread's user registers, read for hb_inflight_now(); off the stack. */
struct hb_other_regs {
	struct pt_regs regs;
	struct regs_copy rc;
	struct kcsand_probe_key key;	/* hb_release_probe_at()'s */
	__u64 ip;			/* the other thread's */
	__u64 probe_ip;			/* the probe it is stopped at (hb_stop_site()) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hb_other_regs);
} hb_inflight_regs SEC(".maps");

/* site_address() of another thread's registers, with its copy in the map. */
static __always_inline __u64 hb_other_address(const struct kcsand_site *s,
					      struct hb_other_regs *o, __u64 ip)
{
	__u64 addr = s->disp;

	if (s->base == KCSAND_REG_RIP)
		return addr + ip + s->insn_len;
	copy_regs(&o->rc, &o->regs);
	if (s->base)
		addr += o->rc.r[(s->base - 1) & 15];
	if (s->index)
		addr += o->rc.r[(s->index - 1) & 15] * s->scale;
	return addr;
}

/*
 * The site of hb_release_probes at ip or one before it (o->probe_ip), in the
 * file of ino where its offset 0 is mapped at base; ~0 for none.
 */
static __always_inline __u32 hb_release_probe_at(struct hb_other_regs *o, __u64 ino, __u64 base,
						 __u64 ip)
{
	__u32 *idx;

	o->key.ino = ino;
	o->key.off = ip - base;
	o->probe_ip = ip;
	idx = bpf_map_lookup_elem(&hb_release_probes, &o->key);
	if (!idx) {
		o->key.off--;
		o->probe_ip = ip - 1;
		idx = bpf_map_lookup_elem(&hb_release_probes, &o->key);
	}
	return idx ? *idx : ~0U;
}

/*
 * The same, in the object of a site hit at site_ip (its probe's address, or
 * with insn its instruction's): the hit tells where that object is mapped,
 * with no lock taken.
 */
static __always_inline __u32 hb_release_probe_near(struct hb_other_regs *o, __u32 site_idx,
						   __u64 site_ip, int insn, __u64 ip)
{
	const struct kcsand_site *s = bpf_map_lookup_elem(&sites, &site_idx);
	__u32 obj;
	__u64 *ino;

	if (!s || !s->probe_off)
		return ~0U;
	obj = s->obj;
	ino = bpf_map_lookup_elem(&hb_obj_ino, &obj);
	if (!ino || !*ino)
		return ~0U;
	if (insn)
		site_ip += s->probe_delta;
	return hb_release_probe_at(o, *ino, site_ip - s->probe_off, ip);
}

/*
 * The site whose probe after it the other thread is stopped at, ip its
 * registers' (the probe's, or one past it in the trap), and o->probe_ip where
 * that probe is; ~0 for none.  One of its late releases; else any locked
 * release (hb_release_probes, its first there too) in the objects of this
 * access and of both threads' late releases, placed by those hits.  Not
 * bpf_find_vma(): it fails while another thread changes the mappings (it
 * only tries their lock), and its callback's frame is one too many.
 */
static __always_inline __u32 hb_stop_site(struct hb_other_regs *o, const struct hb_thread *t,
					  const struct hb_access *acc,
					  const struct hb_thread *other, __u64 ip)
{
	__u32 idx;

	for (int i = 0; i < HB_LATE; i++) {
		const struct hb_late *l = &other->late[i];

		if (l->addr && (ip == l->probe_ip || ip == l->probe_ip + 1)) {
			o->probe_ip = l->probe_ip;
			return l->site;
		}
	}
	idx = hb_release_probe_near(o, acc->site_idx, acc->ip, 1, ip);
	for (int i = 0; i < HB_LATE && idx == ~0U; i++) {
		if (other->late[i].addr)
			idx = hb_release_probe_near(o, other->late[i].site,
						    other->late[i].probe_ip, 0, ip);
		if (idx == ~0U && t->late[i].addr)
			idx = hb_release_probe_near(o, t->late[i].site, t->late[i].probe_ip, 0,
						    ip);
	}
	return idx;
}

/*
 * The other thread stopped between a locked RMW and the probe after it
 * (trapped there, or preempted): its user registers say so, their ip at
 * that probe (hb_stop_site()); the object is computed from them.  Its epoch
 * now is the one that probe will release.  Registers read while it runs in
 * user space are those of its last entry into the kernel, and an entry at
 * that probe is the probe's own, whose release ends the stop (stop_ns, set
 * after its late note): from there the window of that note says
 * (hb_inflight_published(), looked at again by hb_inflight()).
 */
static __always_inline __u32 hb_inflight_now(const struct hb_thread *t,
					      const struct hb_access *acc,
					      const struct hb_thread *other, __u32 s)
{
	const struct kcsand_site *site;
	struct hb_other_regs *o;
	__u32 zero = 0, idx;
	__u64 obj;

	o = bpf_map_lookup_elem(&hb_inflight_regs, &zero);
	if (!o || !other->uregs ||
	    bpf_probe_read_kernel(&o->ip, sizeof(o->ip),
				  (void *)(other->uregs + __builtin_offsetof(struct pt_regs, ip))))
		return 0;
	if ((o->ip == other->stop_ip || o->ip == other->stop_ip + 1) &&
	    other->stop_ns == other->event_ns)
		return 0;
	idx = hb_stop_site(o, t, acc, other, o->ip);
	if (idx == ~0U)
		return 0;
	site = bpf_map_lookup_elem(&sites, &idx);
	if (!site || bpf_probe_read_kernel(&o->regs, sizeof(o->regs), (void *)other->uregs))
		return 0;
	obj = hb_other_address(site, o, o->probe_ip - site->probe_delta) & ~7ULL;
	/*
	 * Its event before the RMW: event_ns, or, once that probe's program
	 * has begun (hb_new_gen()), prev_event_ns.
	 */
	if (hb_acquired_in(t, obj, other->prev_event_ns, ~0ULL))
		return other->vc[s];
	return 0;
}

/*
 * A race found with another thread's access, checked against that
 * thread's late releases (hb_late_note()) before it is reported.  One
 * that released the access's epoch at an object this thread acquired in
 * the release's window (after the releaser's event before the RMW, before
 * the release was published) may be the release the acquire read from:
 * the RMW had run, the probe after it had not.  So may one still in
 * flight (hb_inflight_now()).  Then the acquire is taken to have found
 * it, the epoch joined, and the race dropped.  That only adds order: an
 * acquire in the window that read the value from before the RMW is
 * ordered too, as a probe ahead would have ordered it.  What the releaser
 * does after its release is a later epoch, still checked
 * (racy_fetch_add_late_write).
 */
static __noinline int hb_inflight(struct hb_thread *t, const struct hb_scratch *scratch)
{
	const struct hb_cell *found;
	struct hb_thread *other;
	__u32 tid, s, clock;

	if (!t || !scratch)
		return 0;
	found = &scratch->found;
	tid = found->tid;
	s = (found->slot1 - 1) & (HB_SLOTS - 1);
	other = bpf_map_lookup_elem(&hb_threads, &tid);
	if (!other || other->tgid != t->tgid || other->slot != s)
		return 0;
	clock = hb_inflight_published(t, other, found->clock);
	if (!clock)
		clock = hb_inflight_now(t, &scratch->acc, other, s);
	/*
	 * Not in flight when its registers were read: it may have published
	 * since the first look (its late note comes before its registers
	 * leave the probe), so a second one.
	 */
	if (clock < found->clock)
		clock = hb_inflight_published(t, other, found->clock);
	if (clock < found->clock)
		return 0;
	if (t->vc[s] < clock)
		t->vc[s] = clock;
	hb_count(KCSAND_HB_CTR_INFLIGHT);
	return 1;
}

/* Check scratch->acc (filled) against the shadow of its granules, remember it, report a race. */
static __always_inline void hb_check_report(void *ctx, struct pt_regs *regs, struct hb_thread *t,
					    struct hb_scratch *scratch)
{
	/* Reported from here: the two calls' frames would not fit next to the engine's. */
	if (hb_access_granules(ctx, scratch, t) &&
	    !hb_task_stack_dead(t->tgid, scratch->acc.addr, scratch->found.time_ns, regs->sp) &&
	    !hb_inflight(t, scratch) &&
	    hb_report_due(scratch->found.site, scratch->acc.site_idx, scratch->now)) {
		/* Before the report, as a watcher's (engine.bpf.h's emit_report). */
		scratch->acc.ustack = ustack_send_seq(regs, 1, 0);
		hb_report(ctx, scratch, t->tgid);
	}
	if (scratch->copy_key)
		hb_stack_copy(regs, scratch->copy_key);
}

/* bpf/history_watch.bpf.h: a read of a granule the shadow had nothing of, to be watched. */
static __always_inline void hb_watch_offer(const struct hb_thread *t,
					   struct hb_scratch *scratch, __u64 sp);

/*
 * A sampled access (an armed site's uprobe, or its execute breakpoint in a
 * hot turn).  Kernel mode stays KCSAN-only: hb_enabled is never set there.
 * A marked access (and a plain one of a learned atomic) is checked and
 * remembered as a plain one is, before its acquire or release: a plain
 * access racing with it is a race, another marked one is not.
 */
static __always_inline void history_access(void *ctx, struct pt_regs *regs, __u32 site_idx,
					   __u64 probe_ip)
{
	const struct kcsand_site *site;
	struct hb_scratch *scratch;
	struct hb_thread *t;
	__u32 zero = 0;
	__u64 ip, t0;
	int learned;

	/*
	 * `kcsanctl off` stops the history's checks and reports as it stops the watchpoints;
	 * its sync handlers keep the clocks going, so that nothing is out of order after `on`.
	 */
	if (!PARAM(enabled) || !hb_traced() || hb_paused)
		return;
	t0 = bpf_ktime_get_ns();
	site = bpf_map_lookup_elem(&sites, &site_idx);
	if (!site || (site->flags & KCSAND_SITE_DATA_RACE))
		return;
	t = hb_self();
	if (!t)
		return;
	hb_slot_catch_up(t);
	hb_new_gen(t, t0);
	hb_settle_at(t, regs->sp);
	scratch = bpf_map_lookup_elem(&hb_scratch, &zero);
	if (!scratch)
		return;
	ip = probe_ip - site->probe_delta;
	scratch->acc.ip = ip;
	scratch->acc.addr = site_address(site, regs, ip);
	learned = atomic_learned(site, scratch->acc.addr);
	if (learned)
		atomic_site_learned(site_idx, scratch->acc.addr & ~7ULL, 0);
	hb_access_fill(scratch, site, site_idx, regs, learned);
	hb_count(KCSAND_HB_CTR_CHECKED);
	if (scratch->acc.type & KCSAND_ACCESS_ATOMIC)
		hb_count(KCSAND_HB_CTR_MARKED_CHECKED);
	hb_check_report(ctx, regs, t, scratch);
	/* Not on the race's result: two paths through what follows, for the verifier. */
	hb_watch_offer(t, scratch, regs->sp);
	/* A marked access's acquire or release comes after its own check (its epoch). */
	if (scratch->acc.type & KCSAND_ACCESS_ATOMIC)
		hb_marked(t, site, site_idx, scratch->acc.addr, scratch->acc.ip + site->probe_delta,
			  regs->sp);
	hb_time(KCSAND_HB_CTR_ACCESS_NS, t0);
}

/*
 * A probe ahead of a locked read-modify-write (include/kcsand.h,
 * KCSAND_COOKIE_AHEAD), on an instruction that runs or jumps into it, delta
 * bytes before it.  The probe after it runs when other CPUs can already
 * see what it wrote, and one that read it and acquired would not find its
 * release yet.  Here the release is published before the write: the
 * thread's current epoch, with no new one started, so that this
 * instruction's own access and the RMW's, each stamped with that epoch by
 * its own probe whichever runs first, are covered.  The probe after the RMW
 * releases again and starts the next epoch, so what the thread does after
 * the RMW is not covered.  An acquirer that read the old value before the
 * RMW, or a branch that went elsewhere, takes the epoch early: more order,
 * never less.
 */
static __always_inline void history_release_ahead(struct pt_regs *regs, __u32 site_idx,
						  __s32 delta)
{
	const struct kcsand_site *site;
	struct hb_thread *t;
	__u64 t0;

	if (!PARAM(enabled) || !hb_traced() || hb_paused)
		return;
	site = bpf_map_lookup_elem(&sites, &site_idx);
	if (!site || !site->probe_delta || (site->flags & KCSAND_SITE_DATA_RACE) ||
	    !(site->flags & KCSAND_SITE_WRITE) || site->order == KCSAND_ORDER_RELAXED ||
	    site->order == KCSAND_ORDER_ACQUIRE)
		return;
	t0 = bpf_ktime_get_ns();
	t = hb_self();
	if (!t)
		return;
	hb_new_gen(t, t0);
	hb_settle(t);
	t->ahead_obj = site_address(site, regs, regs->ip + delta) & ~7ULL;
	hb_release(t, t->ahead_obj, 0);
	hb_count(KCSAND_HB_CTR_AHEAD);
	hb_time(KCSAND_HB_CTR_SYNC_NS, t0);
}

#endif

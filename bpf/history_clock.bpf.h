/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The history detector's clocks: vector clocks joined in place, each
 * thread's slot and clock, release and acquire on a sync object, a
 * marked access as the sync operation it is.  Included by history.bpf.h
 * after its maps, before history_shadow.bpf.h.
 */
#ifndef KCSAND_HISTORY_CLOCK_BPF_H
#define KCSAND_HISTORY_CLOCK_BPF_H

/*
 * The clock loops are global functions: the verifier checks a global
 * function once per program, and a static one again at every call, which
 * made loading the history's programs take half a second.  So are the
 * history's other helpers that do not need the caller's state: release,
 * acquire, forget, the OpenMP tasks' steps, and the bodies of bpf_loop()
 * callbacks, which newer verifiers (6.18's here) walk again until their
 * state converges, calls and loops included.  A global function takes scalars
 * and pointers to sized memory, which it tests for NULL, and returns a
 * scalar (docs/PERFORMANCE.md has what each cut saved).
 */
struct hb_vc {
	__u32 c[HB_SLOTS];
};

/* dst = max(dst, src), entry by entry. */
__noinline int hb_vc_join_g(struct hb_vc *dst, const struct hb_vc *src)
{
	if (!dst || !src)
		return 0;
	for (int i = 0; i < HB_SLOTS; i++) {
		__u32 s = src->c[i];

		if (dst->c[i] < s)
			dst->c[i] = s;
	}
	return 0;
}

/*
 * The same into a clock other threads join into at the same time.  A
 * compare-and-swap fails only when another release raised the entry in
 * between, so a few tries do; should HB_CAS_TRIES all fail, the entry may
 * stay below what this thread released, an edge lost: counted, and the
 * daemon drops the history's reports from then on (history.h).
 */
#define HB_CAS_TRIES	32

/*
 * *entry = max(*entry, c) by compare-and-swap.  Its own global function:
 * inlined in the loop below, the verifier walked its tries again for
 * every entry, 50,000 instructions of each program that releases.
 */
__noinline int hb_cas_max_g(__u32 *entry, __u32 c)
{
	int r;

	if (!entry)
		return 0;
	for (r = 0; r < HB_CAS_TRIES; r++) {
		__u32 old = *entry;

		if (old >= c || __sync_val_compare_and_swap(entry, old, c) == old)
			break;
	}
	if (r == HB_CAS_TRIES)
		hb_count(KCSAND_HB_CTR_CAS_LOST);
	return 0;
}

__noinline int hb_vc_join_atomic_g(struct hb_vc *dst, const struct hb_vc *src)
{
	if (!dst || !src)
		return 0;
	for (int i = 0; i < HB_SLOTS; i++) {
		__u32 c = src->c[i];

		/* Most entries are already as high: no call for them. */
		if (dst->c[i] < c)
			hb_cas_max_g(&dst->c[i], c);
	}
	return 0;
}

#define hb_vc_join(dst, src) hb_vc_join_g((struct hb_vc *)(dst), (const struct hb_vc *)(src))
#define hb_vc_join_atomic(dst, src) \
	hb_vc_join_atomic_g((struct hb_vc *)(dst), (const struct hb_vc *)(src))

/*
 * A process's slots, each the vector-clock entry of one thread or task
 * at a time, or of several threads once every slot is taken
 * (hb_share_slot): taken (the bit in p->used set by whoever sets it
 * first), started above the clock its last owner left it at, given back
 * when the last thread in it leaves.
 */
static __always_inline int hb_slot_try(struct hb_proc *p, int i)
{
	__u64 bit = 1ULL << i;

	return !(p->used & bit) && !(__sync_fetch_and_or(&p->used, bit) & bit);
}

/*
 * t took slot: its entry, and the process's clock of it, start one above
 * the last owner's; one thread in it.  The count comes last: a sharer
 * joins only a slot that counts one (x86 keeps the stores in order).
 */
static __always_inline void hb_slot_start(struct hb_proc *p, struct hb_thread *t, int slot)
{
	__u32 s = slot & (HB_SLOTS - 1), start = p->last_clock[s] + 1;

	t->vc[s] = start;
	p->cur_clock[s] = start;
	*(volatile __s32 *)&p->sharers[s] = 1;
}

/* The latest clock of slot i: its owner's now, or its last owner's when it has none. */
static __always_inline __u32 hb_slot_clock(const struct hb_proc *p, __u32 i)
{
	__u32 cur = p->cur_clock[i & (HB_SLOTS - 1)], last = p->last_clock[i & (HB_SLOTS - 1)];

	return cur > last ? cur : last;
}

/*
 * A thread or task in slot s leaves it, its last clock last.  Others still
 * in it (sharers) go on with its clock; the last one gives it back, and
 * the slot's next owner starts above every epoch any of them took.
 */
static __always_inline void hb_slot_leave(struct hb_proc *p, __u32 s, __u32 last)
{
	__u32 i = s & (HB_SLOTS - 1), cur;
	__s32 was = __sync_fetch_and_add(&p->sharers[i], -1);

	if (was > 1)
		return;
	if (was < 1)	/* left twice: the count stays at 0 */
		__sync_fetch_and_add(&p->sharers[i], 1);
	cur = p->cur_clock[i];
	p->last_clock[i] = last > cur ? last : cur;
	__sync_fetch_and_and(&p->used, ~(1ULL << i));
}

/*
 * A free slot of process p for a thread created by parent, taken; -1 if
 * none.  A thread with no known creator comes with a zeroed one.
 */
__noinline int hb_take_slot(struct hb_proc *p, const struct hb_thread *parent)
{
	if (!p || !parent)
		return -1;
	for (int i = 0; i < HB_SLOTS; i++) {
		__u32 last = p->last_clock[i];

		/*
		 * A slot a thread left is taken again only by a thread whose
		 * creator knew all that thread did (it joined it): the new
		 * thread's own entry then says nothing false about the old one.
		 */
		if (last && parent->vc[i] < last)
			continue;
		if (hb_slot_try(p, i))
			return i;
	}
	/*
	 * None: more than HB_SLOTS threads were created and not joined (a
	 * thread per request, joined late or detached).  A slot whose thread
	 * ended is taken anyway, as TSan reuses the id of a thread that
	 * finished: whoever later learns the new thread's epochs takes the
	 * old thread's as known too.  That hides races with the old thread's
	 * accesses; it makes none up.
	 */
	for (int i = 0; i < HB_SLOTS; i++) {
		if (hb_slot_try(p, i))
			return i;
	}
	return -1;
}

/*
 * Every slot is taken by a live thread (more than HB_SLOTS alive at once):
 * the new thread shares one, and from then on the threads in it take their
 * epochs from the slot's one clock (hb_tick), as if they were one thread.
 * Whoever acquires a sharer's epoch takes the others' earlier ones as known
 * too: that hides races between the sharers, and of a sharer with a thread
 * that synchronized only with another sharer; it makes none up
 * (docs/history.md, "What it keeps").  Of HB_SHARE_LOOK slots from a point
 * that moves one slot at each share, so that the sharers spread over all
 * of them in turn, the one with the fewest threads in it; the creator's
 * own slot last (a thread and its creator share data most).  A few, not
 * all: the verifier walks each one looked at, in every program that can
 * start a thread (64 took 20,000 more instructions in each).  Returns the
 * slot, or -1 when none could be joined.
 */
#define HB_SHARE_LOOK	4
/*
 * Tries of the join's CAS on the chosen slot's count, fewer than
 * HB_CAS_TRIES: it fails only when another thread joined or left the slot
 * in between, and when its last one left, hb_new_slot() takes a free slot
 * instead.
 */
#define HB_SHARE_TRIES	4

__noinline int hb_share_slot(struct hb_proc *p, const struct hb_thread *parent)
{
	__u32 start, avoid, best = 0;
	__s32 fewest = 0x7fffffff;

	if (!p || !parent)
		return -1;
	start = __sync_fetch_and_add(&p->share_next, 1);
	avoid = parent->slot & (HB_SLOTS - 1);
	for (int j = 0; j < HB_SHARE_LOOK; j++) {
		__u32 i = (start + j) & (HB_SLOTS - 1);
		__s32 n = p->sharers[i];

		if (n < 1)
			continue;	/* free, or being started: hb_take_slot's */
		if (i == avoid)
			n += HB_SLOTS;
		if (n < fewest) {
			fewest = n;
			best = i;
		}
	}
	for (int r = 0; r < HB_SHARE_TRIES && fewest != 0x7fffffff; r++) {
		__s32 n = *(volatile __s32 *)&p->sharers[best & (HB_SLOTS - 1)];

		if (n < 1)
			return -1;	/* its last thread left in between */
		if (__sync_val_compare_and_swap(&p->sharers[best & (HB_SLOTS - 1)], n, n + 1) == n)
			return best & (HB_SLOTS - 1);
	}
	return -1;
}

/* A slot for a new thread: a free one, else a live one shared (+ HB_SLOTS), else -1. */
static __always_inline int hb_new_slot(struct hb_proc *p, const struct hb_thread *parent)
{
	int slot = hb_take_slot(p, parent);

	if (slot >= 0)
		return slot;
	/* Taken between the two looks: one more try for a free one. */
	slot = hb_share_slot(p, parent);
	if (slot < 0)
		slot = hb_take_slot(p, parent);
	else
		slot += HB_SLOTS;
	return slot;
}

/*
 * t joins slot s, shared: its entry, above what it got from its creator,
 * is the slot's next epoch, after every epoch its sharers took.
 */
static __always_inline void hb_slot_join(struct hb_proc *p, struct hb_thread *t, __u32 s)
{
	__u32 v = __sync_add_and_fetch(&p->cur_clock[s & (HB_SLOTS - 1)], 1);

	if (t->vc[s & (HB_SLOTS - 1)] < v)
		t->vc[s & (HB_SLOTS - 1)] = v;
	hb_count(KCSAND_HB_CTR_SLOT_SHARED);
}

/*
 * A sampled access of t, in a slot it may share: its epoch is the slot's
 * clock now, after every epoch its sharers took so far.  Left at t's own
 * last epoch, a sharer's later release (a mutex it unlocked since) would
 * carry a higher one, and whoever acquired that would take this access as
 * ordered before it though it came after: a race missed that even one
 * thread doing what the sharers did, in the order they did it, would show.
 * The slot's clock stays above every entry of it: nothing made up.  Free
 * until a slot was first shared.
 */
static __always_inline void hb_slot_catch_up(struct hb_thread *t)
{
	__u32 s = t->slot & (HB_SLOTS - 1), tgid = t->tgid, c;
	struct hb_proc *p;

	if (!*(volatile __u64 *)&hb_counters[KCSAND_HB_CTR_SLOT_SHARED])
		return;
	p = bpf_map_lookup_elem(&hb_procs, &tgid);
	/* Alone in it again, it is still below what a sharer that left took: no count read. */
	if (!p)
		return;
	c = *(volatile __u32 *)&p->cur_clock[s];
	if (t->vc[s] < c)
		t->vc[s] = c;
}

/*
 * A new thread: a slot of its process (a free one, else one shared with
 * live threads), its own entry above every epoch the slot's threads took,
 * and what its creator knew.  Without a slot (hb_share_slot() lost every
 * race for one) or an entry in hb_threads, it has no clock: its accesses
 * are not checked, its sync is not traced, and the daemon drops the
 * history's reports (KCSAND_HB_CTR_NO_SLOT).
 */
static __noinline struct hb_thread *hb_new_thread(__u32 tid, __u32 tgid,
						  const struct hb_thread *parent)
{
	struct hb_thread *t;
	struct hb_proc *p;
	int slot;

	p = hb_get(&hb_procs, &tgid);
	if (!p)
		return NULL;
	slot = hb_new_slot(p, parent ? parent : hb_zero_value());
	/*
	 * Past history_slots (a test's limit; 0 until the daemon writes the
	 * parameters): no clock, as when every slot is lost.
	 */
	if (slot >= 0 && PARAM(history_slots) && (slot & (HB_SLOTS - 1)) >= PARAM(history_slots)) {
		hb_slot_leave(p, slot, 0);
		slot = -1;
	}
	t = slot < 0 ? NULL : hb_get(&hb_threads, &tid);
	if (!t) {
		if (slot >= 0)
			hb_slot_leave(p, slot, 0);
		hb_count(KCSAND_HB_CTR_NO_SLOT);
		return NULL;
	}
	t->slot = slot & (HB_SLOTS - 1);
	t->tgid = tgid;
	/*
	 * A new thread is in no sync call yet (hb_new_gen).  One first seen
	 * at an event, not at its creation (it ran before its process was
	 * traced, or was created while it was held), may return from calls
	 * entered unseen: pgen 0, no generation's, acquires all at its first
	 * event.
	 */
	t->gen = hb_gen;
	t->pgen = 0;
	t->bar_ok = 0;		/* a tid reused: its entry may be the old thread's */
	/* What was learned and not armed yet, it acquires at its first event. */
	t->learn_seen = *(volatile __u64 *)&atomic_learn_armed;
	if (parent) {
		__u32 *v = bpf_map_lookup_elem(&hb_tgids, &tgid);

		t->pgen = v ? *v : 0;
	}
	if (parent)
		hb_vc_join(t->vc, parent->vc);
	if (slot >= HB_SLOTS)
		hb_slot_join(p, t, slot);
	else
		hb_slot_start(p, t, slot);
	return t;
}

static __always_inline struct hb_thread *hb_self(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct hb_thread *t = bpf_map_lookup_elem(&hb_threads, &tid);

	if (!t)
		t = hb_new_thread(tid, id >> 32, NULL);
	/*
	 * Its user registers, for another thread's hb_inflight_now(), before
	 * its first locked release: task_pt_regs() is fixed for the task's
	 * life, so taken once, by the thread itself (its entry may have been
	 * made by its creator).
	 */
	if (t && !t->uregs)
		t->uregs = (__u64)bpf_task_pt_regs(bpf_get_current_task_btf());
	return t;
}

/* A new epoch of the thread, published for hb_acquire_all(). */
static __always_inline void hb_tick(struct hb_thread *t)
{
	__u32 s = t->slot & (HB_SLOTS - 1), tgid = t->tgid, v;
	struct hb_proc *p;

	p = bpf_map_lookup_elem(&hb_procs, &tgid);
	if (!p) {
		t->vc[s]++;
		return;
	}
	/*
	 * The slot's one clock: a slot shared by several threads gives each
	 * of them epochs above all the others took (hb_share_slot), and the
	 * slot's clock stays at or above every entry of it, for
	 * hb_acquire_all().  A thread alone in its slot moves it alone.
	 */
	v = __sync_add_and_fetch(&p->cur_clock[s], 1);
	t->vc[s] = v > t->vc[s] ? v : t->vc[s] + 1;
}

/* Sync objects in user memory: below are libgomp's own and above, kernel objects and hashes. */
#define HB_USER_MIN	4096ULL
#define HB_USER_END	(1ULL << 47)

static __always_inline __u32 hb_sync_page(__u32 tgid, __u64 page)
{
	return ((page ^ ((__u64)tgid << 36)) * 0x9e3779b97f4a7c15ULL) >> (64 - HB_SYNC_PAGE_BITS);
}

/* An object of user memory in hb_syncs: its line's bit, for hb_forget_syncs(). */
static __always_inline void hb_sync_note(__u32 tgid, __u64 addr)
{
	__u32 idx = hb_sync_page(tgid, addr >> 12);
	__u64 bit = 1ULL << ((addr >> 6) & 63), *w;

	if (addr < HB_USER_MIN || addr >= HB_USER_END)
		return;
	w = bpf_map_lookup_elem(&hb_sync_lines, &idx);
	if (w && !(*(volatile __u64 *)w & bit))
		__sync_fetch_and_or(w, bit);
}

/* The object at addr of t's process in hb_syncs, or NULL; *k is its key, for hb_get(). */
static __always_inline struct hb_sync *hb_sync_find(struct hb_thread *t, __u64 addr,
						    struct hb_key *k)
{
	k->tgid = t->tgid;
	k->addr = addr;
	return bpf_map_lookup_elem(&hb_syncs, k);
}

__noinline int hb_release(struct hb_thread *t, __u64 addr, int new_epoch)
{
	struct hb_key k = {};
	struct hb_sync *s;
	__u32 tgid;
	struct hb_proc *p;

	if (!t)
		return 0;
	tgid = t->tgid;
	s = hb_sync_find(t, addr, &k);
	if (!s) {
		s = hb_get(&hb_syncs, &k);
		p = bpf_map_lookup_elem(&hb_procs, &tgid);
		/*
		 * A new object of a process whose releases went into the
		 * overflow object: one of them may have been this object's,
		 * before objects freed made room for it (hb_forget_syncs).
		 */
		if (s && p && p->overflowed)
			hb_vc_join_atomic(s->vc, p->overflow);
	}
	if (!s) {
		hb_count(KCSAND_HB_CTR_SYNC_FULL);
		p = bpf_map_lookup_elem(&hb_procs, &tgid);
		if (!p)
			return 0;
		hb_vc_join_atomic(p->overflow, t->vc);
		p->overflowed = 1;
	} else {
		hb_vc_join_atomic(s->vc, t->vc);
		hb_sync_note(tgid, addr);
	}
	if (new_epoch && !t->once_depth)
		hb_tick(t);
	return 0;
}

/*
 * The thread's last acquires, one entry per object, for hb_inflight(): an
 * object's latest acquire is enough, since one after the release it
 * missed would have found that release.  Objects never released too: the
 * release missed may be the object's first.  Its time is its event's
 * start (hb_new_gen(), every acquire runs in one), not a clock read of its
 * own: the value it acquired was read before its probe ran, so that start
 * bounds the read as well, and it is one clock read less per acquire.
 */
static __always_inline void hb_acq_note(struct hb_thread *t, __u64 addr)
{
	__u64 now = t->event_ns;
	struct hb_acq *old;
	int oldest = 0;

	for (int i = 0; i < HB_ACQS; i++) {
		if (t->acq[i].addr == addr) {
			t->acq[i].ns = now;
			return;
		}
		if (t->acq[i].ns < t->acq[oldest & (HB_ACQS - 1)].ns)
			oldest = i;
	}
	old = &t->acq[oldest & (HB_ACQS - 1)];
	/* Pushed out, kept in hb_acq_spill: only a thread that cycles through objects pays. */
	if (old->addr && hb_late_possible) {
		struct hb_acq_key k = { .tgid = t->tgid, .slot = t->slot, .addr = old->addr };
		/* A copy on the stack: 6.1's verifier takes no PTR_TO_MEM as a map value. */
		__u64 ns = old->ns;

		bpf_map_update_elem(&hb_acq_spill, &k, &ns, BPF_ANY);
		hb_count(KCSAND_HB_CTR_ACQ_SPILLED);
	}
	old->addr = addr;
	old->ns = now;
}

__noinline int hb_acquire(struct hb_thread *t, __u64 addr)
{
	struct hb_key k = {};
	struct hb_sync *s;
	__u32 tgid;
	struct hb_proc *p;

	if (!t)
		return 0;
	hb_acq_note(t, addr);
	tgid = t->tgid;
	s = hb_sync_find(t, addr, &k);
	if (!s) {
		/* Never released, or released when hb_syncs was full (hb_proc.overflow). */
		p = bpf_map_lookup_elem(&hb_procs, &tgid);
		if (p && p->overflowed)
			hb_vc_join(t->vc, p->overflow);
		return 0;
	}
	/* Entries read while a release adds to them: each is one it had, or more. */
	hb_vc_join(t->vc, s->vc);
	return 0;
}

/*
 * Forgetting the sync objects of a range of memory that changes owner
 * (freed, unmapped), as TSan does: a new mutex at a freed one's address
 * must not acquire what the old one released, which would hide a race
 * (tests/history/racy_lock_reused_memory.c), and the table must not fill
 * with the objects of memory long gone.  Keys of user memory are exact
 * addresses: those 4-byte aligned are found (pthread's and C11's objects,
 * a marked access's granule); an odd one stays, as before.
 */
#define HB_SYNC_FORGET_PAGES	(1U << 14)	/* 64 MiB; wider: only the first */

struct hb_sync_forget {
	__u64 lo, hi;		/* [lo, hi) */
	__u64 base;		/* the page being looked at */
	__u64 lines;		/* its lines in [lo, hi) that hold objects */
	__u64 done;		/* of them, those [lo, hi) covers whole: no object left */
	__u32 tgid;
	__u32 freed;
};

/*
 * The objects of [lo, hi) in one line that hb_syncs holds, deleted.  A
 * global function, verified once: inside the two bpf_loop() callbacks
 * the verifier's walk of its loop passed a million instructions.
 */
__noinline int hb_forget_line_g(struct hb_sync_forget *f, __u64 line)
{
	if (!f)
		return 0;
	for (int k = 0; k < 16; k++) {
		struct hb_key key = { .tgid = f->tgid, .addr = line + 4 * k };

		if (key.addr < f->lo || key.addr >= f->hi)
			continue;
		if (bpf_map_lookup_elem(&hb_syncs, &key) && !bpf_map_delete_elem(&hb_syncs, &key))
			f->freed++;
	}
	return 0;
}

/*
 * The index of a word's lowest bit, from a de Bruijn sequence: BPF has no
 * bit scan, and a loop over the 64 bits takes a callback each.
 */
static const __u8 hb_debruijn[64] = {
	0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36, 53, 51,
	43, 22, 45, 39, 33, 30, 24, 18, 12, 5, 63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52,
	21, 44, 32, 23, 11, 46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6,
};

static __always_inline __u32 hb_lowest_bit(__u64 w)
{
	return hb_debruijn[((w & -w) * 0x03f79d71b4cb0a89ULL) >> 58];
}

/* The next line of f->lines: its objects forgotten. */
static long hb_forget_sync_line(__u32 i, void *ctx)
{
	struct hb_sync_forget *f = ctx;
	__u32 b;
	__u64 line;

	if (!f->lines)
		return 1;
	b = hb_lowest_bit(f->lines);
	f->lines &= f->lines - 1;
	line = f->base + 64 * b;
	hb_forget_line_g(f, line);
	if (line >= f->lo && line + 64 <= f->hi)
		f->done |= 1ULL << (b & 63);
	return 0;
}

/*
 * The page at base of [lo, hi): the lines its word says hold objects,
 * their objects forgotten; returns how many.  A global function, verified
 * once, for the same reason as hb_forget_line_g().
 */
__noinline int hb_forget_page_g(__u32 tgid, __u64 lo, __u64 hi, __u64 base)
{
	struct hb_sync_forget f = { .lo = lo, .hi = hi, .base = base, .tgid = tgid };
	__u32 idx = hb_sync_page(tgid, base >> 12);
	__u64 *w = bpf_map_lookup_elem(&hb_sync_lines, &idx);

	if (lo < base)
		lo = base;
	if (hi > base + 4096)
		hi = base + 4096;
	if (!w || lo >= hi)
		return 0;
	/* Lines lo to hi - 1 of the page. */
	f.lines = *(volatile __u64 *)w & (~0ULL >> (63 - (((hi - 1) >> 6) & 63))) &
		  (~0ULL << ((lo >> 6) & 63));
	if (!f.lines)
		return 0;
	bpf_loop(64, hb_forget_sync_line, &f, 0);	/* one call a line with objects */
	if (f.done)
		__sync_fetch_and_and(w, ~f.done);
	return f.freed;
}

/* Page i of the range. */
static long hb_forget_sync_page(__u32 i, void *ctx)
{
	struct hb_sync_forget *f = ctx;

	f->freed += hb_forget_page_g(f->tgid, f->lo, f->hi, ((f->lo >> 12) + i) << 12);
	return 0;
}

static __noinline void hb_forget_syncs(__u32 tgid, __u64 lo, __u64 hi)
{
	struct hb_sync_forget f = { .lo = lo, .hi = hi, .tgid = tgid };
	__u64 pages;

	if (hi <= lo || lo >= HB_USER_END)
		return;
	pages = ((hi - 1) >> 12) - (lo >> 12) + 1;
	bpf_loop(pages < HB_SYNC_FORGET_PAGES ? pages : HB_SYNC_FORGET_PAGES,
		 hb_forget_sync_page, &f, 0);
	if (f.freed)
		hb_add(KCSAND_HB_CTR_SYNC_FREED, f.freed);
}

/*
 * A sync call returned whose entry went unseen, across a pause of the sync
 * probes: which object it acquired is not known, so it is taken to have
 * acquired every epoch of its process so far.  That can hide a race; it
 * never makes one up.
 */
__noinline int hb_acquire_all(struct hb_thread *t)
{
	struct hb_proc *p;
	__u32 tgid;

	if (!t)
		return 0;
	tgid = t->tgid;
	p = bpf_map_lookup_elem(&hb_procs, &tgid);
	if (!p)
		return 0;
	for (int i = 0; i < HB_SLOTS; i++) {
		__u32 c = hb_slot_clock(p, i);

		if (t->vc[i] < c)
			t->vc[i] = c;
	}
	return 0;
}

/*
 * The thread's first event since the sync probes were put back.  It may be
 * returning from a call it entered while they were off (a mutex it waited
 * for), whose return is unseen: a uretprobe only sees the returns of calls
 * entered while it was attached.  So it is taken to have acquired all that
 * its process did so far, and the calls it was in are forgotten, and so
 * are the OpenMP tasks it was running (tasks.bpf.h).
 */
__noinline int hb_task_unwind(struct hb_thread *t);

/* What the current thread has run on a CPU (updated at ticks and switches). */
static __always_inline __u64 hb_thread_cpu_ns(void)
{
	return BPF_CORE_READ(bpf_get_current_task_btf(), se.sum_exec_runtime);
}

/*
 * A settling thread is one that may still be in a call it entered while
 * held: until it has run HB_SETTLE_NS, bounded by HB_SETTLE_WALL_NS for a
 * thread that mostly sleeps.
 */
static __always_inline bool hb_settling(struct hb_thread *t)
{
	if (bpf_ktime_get_ns() < t->settle_ns && hb_thread_cpu_ns() < t->settle_cpu_ns)
		return true;
	t->settle_ns = 0;
	return false;
}

/* now: the event's program's start, which it times already (hb_time()): no second clock read. */
static __always_inline void hb_new_gen(struct hb_thread *t, __u64 now)
{
	__u32 tgid = t->tgid, *v = bpf_map_lookup_elem(&hb_tgids, &tgid);
	__u32 pgen = v ? *v : 0;

	/* Every event starts here: the last two's times bound a locked RMW's (hb_late_note). */
	t->prev_event_ns = t->event_ns;
	t->event_ns = now;

	/* Its process let go after being held (hb_hold) counts as a resume too. */
	if (t->gen == hb_gen && t->pgen == pgen) {
		if (t->settle_ns && hb_settling(t))
			hb_acquire_all(t);
		return;
	}
	/*
	 * After a hold, a call the thread entered before its probes were
	 * attached may return, unseen, after this first event: a dlopen'd
	 * plugin's GOMP_parallel() in which the thread ran the team's work.
	 * Until the thread has run HB_SETTLE_NS on a CPU, every event acquires
	 * all: CPU time, since how long that call takes in wall time is the
	 * machine's load as much as its work (free_dlopen_omp's team, 46 ms
	 * after 100 ms of wall time had run out, at load 20).  Not in
	 * generation 1, a process kcsanctl run added before it ran; nor at a
	 * resume of the sync probes: its window would find nothing.
	 */
	if (t->pgen != pgen && (pgen & ~(KCSAND_HB_TGID_GEN - 1)) > KCSAND_HB_TGID_GEN) {
		t->settle_cpu_ns = hb_thread_cpu_ns() + HB_SETTLE_NS;
		t->settle_ns = bpf_ktime_get_ns() + HB_SETTLE_WALL_NS;
	}
	t->gen = hb_gen;
	t->pgen = pgen;
	t->depth = 0;
	hb_task_unwind(t);
	hb_acquire_all(t);
}

/*
 * Is the thread inside a call its spin-wait loop makes on the way back to
 * the load (`while (!stop) work();`)?  Then the load read a value that
 * kept it looping, and what the call does is not ordered by the release
 * the loop waits for: acquiring here, after the setter may have released
 * since the load, ordered a race of work() with the setter away.  Inside
 * one: below the load's rsp, the slot its loop's calls push their return
 * address to holds one of them, and the load's own frame is still there
 * (its return address unchanged: a frame popped and reused below would
 * leave a stale return address in that slot).  A signal handler run there
 * keeps it waiting too, and the load's acquire comes at the first event
 * out of them.  Anything unreadable acquires now, as before: more order.
 */
static __noinline int hb_in_loop_call(struct hb_thread *t, __u64 sp)
{
	__u64 ret = 0, ra = 0;

	/* sp: the event's user rsp, 0 when its program has no user registers at hand. */
	if (!t || !t->pending_ret[0] ||
	    (!sp && (!t->uregs ||
		     bpf_probe_read_kernel(&sp, sizeof(sp),
					   (void *)(t->uregs +
						    __builtin_offsetof(struct pt_regs, sp))))) ||
	    sp >= t->pending_sp ||
	    bpf_probe_read_user(&ret, sizeof(ret), (void *)(t->pending_sp - 8)) ||
	    (ret != t->pending_ret[0] && ret != t->pending_ret[1]) ||
	    bpf_probe_read_user(&ra, sizeof(ra), (void *)t->pending_ra_at) || ra != t->pending_ra)
		return 0;
	hb_count(KCSAND_HB_CTR_SPIN_WAITED);
	return 1;
}

/*
 * Sites learned atomic and not armed yet when the thread's last event ran
 * (bpf/atomics.bpf.h, atomic_learn_publish()): since then it may have
 * loaded their atomic through an unprobed hit, so it acquires their
 * objects now, and does again at each event until the engine has armed
 * them.  A slot overwritten or still being written: it acquires all.
 */
__noinline int hb_learn_catch_up(struct hb_thread *t)
{
	__u64 upto = *(volatile __u64 *)&atomic_learn_seq;
	__u64 armed = *(volatile __u64 *)&atomic_learn_armed;
	__u64 from;

	if (!t)
		return 0;
	from = t->learn_seen;
	if (upto - from > KCSAND_LEARN_RING) {
		hb_acquire_all(t);
	} else {
		for (int i = 0; i < KCSAND_LEARN_RING; i++) {
			struct kcsand_learn_slot *sl;
			__u64 n = from + i, seq, obj;

			if (n >= upto)
				break;
			sl = &atomic_learn_ring[n & (KCSAND_LEARN_RING - 1)];
			seq = *(volatile __u64 *)&sl->seq;
			asm volatile("" ::: "memory");
			obj = *(volatile __u64 *)&sl->obj;
			asm volatile("" ::: "memory");
			if (seq != n + 1 || *(volatile __u64 *)&sl->seq != seq) {
				hb_acquire_all(t);
				break;
			}
			hb_acquire(t, obj);
		}
	}
	t->learn_seen = armed < upto ? armed : upto;
	return 0;
}

/*
 * The marked load of the thread's last event has run by now: acquire what
 * it read.  sp: the event's user rsp, or 0 (hb_in_loop_call()).
 */
static __always_inline void hb_settle_at(struct hb_thread *t, __u64 sp)
{
	__u64 a = t->pending_acq;

	if (t->learn_seen != *(volatile __u64 *)&atomic_learn_seq)
		hb_learn_catch_up(t);
	if (a && !(t->pending_ret[0] && hb_in_loop_call(t, sp))) {
		t->pending_acq = 0;
		hb_acquire(t, a);
	}
}

static __always_inline void hb_settle(struct hb_thread *t)
{
	hb_settle_at(t, 0);
}

/*
 * A spin-wait load whose loop calls functions: where those calls will put
 * their return address, which ones they are, and the load's own frame
 * (hb_in_loop_call()).  sp is the load's rsp, ip its address.
 */
static __noinline int hb_spin_note(struct hb_thread *t, const struct kcsand_site *site, __u64 sp,
				   __u64 ip)
{
	__u64 end = ip + site->insn_len, ra = 0;

	if (!t || !site || !site->loop_ret[0] || site->loop_ra_slot <= 0 || site->frame_ra < 0)
		return 0;
	/*
	 * The same loop polled again from the same frame: its return address
	 * was read at the last poll.  Kept if the frame was popped and made
	 * again at this rsp: a different caller's then differs from it at
	 * the check, which acquires, as before.
	 */
	if (t->pending_ra_at == sp + site->frame_ra &&
	    t->pending_sp == sp - site->loop_ra_slot + 8 &&
	    t->pending_ret[1] == end + site->loop_ret[1]) {
		t->pending_ret[0] = end + site->loop_ret[0];
		return 0;
	}
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(sp + site->frame_ra)))
		return 0;
	t->pending_sp = sp - site->loop_ra_slot + 8;
	t->pending_ra = ra;
	t->pending_ra_at = sp + site->frame_ra;
	t->pending_ret[1] = end + site->loop_ret[1];
	t->pending_ret[0] = end + site->loop_ret[0];
	return 0;
}

/*
 * A locked RMW's release, published by the probe after it: unless a probe
 * ahead of it published it already (history_release_ahead(), at the
 * thread's last event), it is late, and kept for hb_inflight() with the
 * epoch it releases and the window the RMW ran in: after the thread's
 * event before this one.  Its end is set once the release is published.
 */
static __always_inline struct hb_late *hb_late_note(struct hb_thread *t, __u64 obj,
						    __u32 site_idx, __u64 probe_ip)
{
	__u64 ahead = t->ahead_obj;
	struct hb_late *late;

	t->ahead_obj = 0;
	if (ahead == obj)
		return NULL;
	late = &t->late[t->late_next++ & (HB_LATE - 1)];
	late->addr = obj;
	late->from_ns = t->prev_event_ns;
	late->ns = ~0ULL;		/* until published: any acquire after from_ns */
	late->clock = t->vc[t->slot & (HB_SLOTS - 1)];
	late->site = site_idx;
	late->probe_ip = probe_ip;
	hb_count(KCSAND_HB_CTR_LATE);
	return late;
}

/* A locked RMW's release (a frame of its own: the access probes' stack is full). */
static __noinline int hb_release_locked(struct hb_thread *t, __u64 obj, __u32 site_idx,
					__u64 probe_ip)
{
	struct hb_late *late;

	if (!t)
		return 0;
	late = hb_late_note(t, obj, site_idx, probe_ip);
	/*
	 * This stop is over for hb_inflight_now() from here: after the late
	 * note, which covers the rest (x86 keeps the two stores in order).
	 */
	t->stop_ip = probe_ip;
	t->stop_ns = t->event_ns;
	hb_release(t, obj, 1);
	/* Published now, not at the event's start: an acquire until here may have missed it. */
	if (late)
		late->ns = bpf_ktime_get_ns();
	return 0;
}

/*
 * A marked access is a sync operation on its granule (C11 and C++ atomics,
 * READ_ONCE and the like): a load acquires, a store releases, a
 * read-modify-write does both.  A probe runs before its instruction,
 * except on a lock-prefixed one (probe_delta): an acquire before the load
 * has run would miss the release it reads from, so it waits for the
 * thread's next event.
 */
static __always_inline void hb_marked(struct hb_thread *t, const struct kcsand_site *site,
				      __u32 site_idx, __u64 addr, __u64 probe_ip, __u64 sp)
{
	__u64 obj = addr & ~7ULL;

	hb_count(KCSAND_HB_CTR_MARKED);
	/* The source names the order (memory_order_relaxed ...): only what it says. */
	if ((site->flags & KCSAND_SITE_READ) && site->order != KCSAND_ORDER_RELAXED &&
	    site->order != KCSAND_ORDER_RELEASE) {
		if (site->probe_delta) {
			hb_acquire(t, obj);
		} else {
			t->pending_acq = obj;
			t->pending_ret[0] = 0;
			if (site->loop_ret[0])
				hb_spin_note(t, site, sp, probe_ip);
		}
	}
	if ((site->flags & KCSAND_SITE_WRITE) && site->order != KCSAND_ORDER_RELAXED &&
	    site->order != KCSAND_ORDER_ACQUIRE) {
		if (site->probe_delta)
			hb_release_locked(t, obj, site_idx, probe_ip);
		else
			hb_release(t, obj, 1);
	}
}

#endif

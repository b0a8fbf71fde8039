/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The history detector: happens-before over the sampled accesses, so that
 * two accesses that never overlap in time are still seen to race.
 *
 * Every thread of a traced process carries a vector clock (one entry per
 * thread slot of its process).  Sync objects (a mutex, a semaphore, the
 * address of an atomic, a libgomp team) carry one too: a release joins the
 * thread's clock into the object's and starts a new epoch of the thread,
 * an acquire joins the object's clock into the thread's.  Sync probes
 * (uprobes on libc and libgomp, the fork and exit tracepoints, marked
 * accesses) are never sampled.
 *
 * Each sampled plain access is checked against a shadow entry for its
 * 8-byte granule, which remembers up to HB_CELLS earlier accesses as
 * epochs (slot, clock) with their site, time and stack.  A remembered
 * access of another thread that conflicts and whose epoch the current
 * thread has not acquired is a race, reported with both stacks.
 *
 * Included by kcsand.bpf.c after the traced-process filter; uses the site
 * table, the ring buffer and fill_access() of engine.bpf.h.
 */
#ifndef KCSAND_HISTORY_BPF_H
#define KCSAND_HISTORY_BPF_H

#define HB_SLOTS	KCSAND_HB_MAX_THREADS
#define HB_CELLS	4
#define HB_SHADOW_BITS	16
/*
 * Nested sync calls whose return is probed, remembered: as many as the
 * kernel keeps uretprobes for in one task (MAX_URETPROBE_DEPTH).  Recursive
 * OpenMP tasks nest two a level (the task's function, its taskwait); 8 lost
 * returns in tests/history/free_omp_task_recursive.c.
 */
#define HB_DEPTH	64
/* A second report of the same pair of sites is not sent within this (the daemon dedups). */
#define HB_REPORT_GAP_NS	(100 * 1000000ULL)

/* Sync objects of libgomp's own, keyed below any address a program can map. */
#define HB_OBJ_OMP_END		1	/* outlined functions that returned */
#define HB_OBJ_OMP_TASKS	2	/* tasks that finished */
#define HB_OBJ_OMP_BARRIER	3
#define HB_OBJ_OMP_CRITICAL	4
#define HB_OBJ_OMP_ATOMIC	5
#define HB_OBJ_OMP_ORDERED	6

/* What an outlined function was spawned as (hb_fns). */
#define HB_FN_PARALLEL	1
#define HB_FN_TASK	2

/* Set by the daemon when the detector is on (user mode). */
__u32 hb_enabled;
/*
 * Sync probes cost a trap per call, so the daemon takes them off while
 * their cost is over its share of the budget (history/pace.c) and puts
 * them back later.  Nothing is remembered while hb_paused is set, and
 * hb_gen moves on at every resume: what was remembered before a pause is
 * forgotten, since synchronization during the pause went unseen.
 */
__u32 hb_paused;
__u32 hb_gen;
__u64 hb_counters[KCSAND_HB_CTR_COUNT];

/* Processes the daemon probed the sync functions of: only they have a history. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} hb_tgids SEC(".maps");

static __always_inline int hb_traced(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return hb_enabled && bpf_map_lookup_elem(&hb_tgids, &tgid);
}

struct hb_thread {
	__u32 slot;
	__u32 tgid;
	/* A marked load's address: acquired at the thread's next event, after the load ran. */
	__u64 pending_acq;
	__u32 last_child;	/* the thread it created last (fork tracepoint) */
	__u32 once_depth;	/* inside pthread_once(): the epoch is kept until it returns */
	__u32 gen;		/* hb_gen at its last sync event: depth is stale if older */
	__u32 depth;		/* sync calls entered and not yet returned */
	__u32 op[HB_DEPTH];
	__u64 arg0[HB_DEPTH];
	__u64 arg1[HB_DEPTH];
	__u32 vc[HB_SLOTS];
};

/*
 * Tracing programs cannot take a bpf_spin_lock: the slot bitmap and the
 * clocks of sync objects are updated with atomics (a clock entry only
 * grows, so a compare-and-swap loop computes the max), and a shadow entry
 * is taken with a try-lock of its own.
 */
/*
 * Memory that changes owner (freed, unmapped, a new thread's stack) is
 * forgotten: its remembered accesses must not race with the next owner's.
 * A range of up to HB_FORGET_CLEAR granules is cleared in the shadow, one
 * granule at a time (a heap block: most are small).  A wider one (a
 * thread's stack, a large block, an unmapping) is kept as a range with its
 * time, one of HB_RANGES per process, and every check drops the cells of
 * its granule remembered before the latest range that covers it.  A range
 * pushed out by a newer one moves forgot_ns, before which every access of
 * the process is forgotten: that can hide a race, never make one up.
 */
#define HB_FORGET_CLEAR	512
#define HB_RANGES	KCSAND_HB_RANGES

struct hb_range {
	__u64 lo, hi;		/* [lo, hi) */
	__u64 ns;		/* forgotten: its cells remembered before this; ~0 while written */
};

struct hb_proc {
	__u64 used;			/* slots taken by live threads */
	__u32 last_clock[HB_SLOTS];	/* a slot's next thread starts above this */
	__u32 cur_clock[HB_SLOTS];	/* a live slot's own clock, for hb_acquire_all() */
	/*
	 * Releases when hb_syncs is full, all into one object, which every
	 * acquire of an object not in hb_syncs then acquires: more order
	 * than the program has, never less.
	 */
	__u32 overflow[HB_SLOTS];
	__u32 overflowed;
	__u32 __pad2;
	__u64 forgot_ns;		/* every cell remembered before this is forgotten */
	__u32 next_range;		/* the range to push out next, modulo HB_RANGES */
	__u32 __pad;
	struct hb_range range[HB_RANGES];
};

struct hb_key {
	__u32 tgid;
	__u32 __pad;
	__u64 addr;
};

struct hb_sync {
	__u32 vc[HB_SLOTS];
};

/* One remembered access. slot1 is the thread's slot + 1: 0 is an empty cell. */
struct hb_cell {
	__u64 ip;
	__u64 ra;
	__u64 stack_key;
	__u64 time_ns;
	__u32 tid;
	__u32 clock;
	__u32 site;
	__u16 slot1;
	__u16 cpu;
	__u8 mask;		/* bytes of the granule it touched */
	__u8 type;		/* KCSAND_ACCESS_* */
	__u8 size;
	__u8 off;		/* address & 7 */
	__u8 __pad[4];
};

struct hb_shadow {
	__u32 seq;		/* odd: a thread is checking or updating the entry */
	__u32 tgid;
	__u64 granule;		/* address >> 3 */
	__u32 gen;		/* hb_gen when its cells were remembered */
	__u32 __pad;
	struct hb_cell cell[HB_CELLS];
};

struct hb_stack {
	__s32 nr;
	__u32 copied;		/* its struct kcsand_ustack went out, under the stack's key */
	__u64 ip[KCSAND_MAX_STACK];
};


/*
 * One sampled access, in the per-CPU scratch: the engine's frame leaves
 * little of the 512-byte BPF stack, and a map holds no pointers, so the
 * stack-walk needs ctx passed along and everything else is a value here.
 */
struct hb_access {
	__u64 ip;
	__u64 addr;
	__u64 ra;		/* return address of a frameless site's caller, or 0 */
	__u64 ustack;		/* the report's copy of this side's stack (ustack.bpf.h), or 0 */
	__u32 site_idx;
	__u32 size;
	__u32 type;		/* KCSAND_ACCESS_* */
	__u32 __pad;
};

/* Per CPU: what does not fit on the BPF stack next to the engine's frame. */
struct hb_scratch {
	struct hb_stack stk;
	__u64 copy_key;		/* a stack remembered without its copy yet: take it (or 0) */
	struct hb_cell found;
	struct hb_access acc;
	__u64 now;
};

struct hb_pair {
	__u32 a, b;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);			/* tid */
	__type(value, struct hb_thread);
} hb_threads SEC(".maps");

/* The clocks of threads that exited, for pthread_join(). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct hb_thread);
} hb_exited SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);			/* tgid */
	__type(value, struct hb_proc);
} hb_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct hb_key);
	__type(value, struct hb_sync);
} hb_syncs SEC(".maps");

/* pthread_t -> tid, from pthread_create()'s return. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct hb_key);
	__type(value, __u32);
} hb_pthreads SEC(".maps");

/* An outlined OpenMP function's address -> HB_FN_*. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct hb_key);
	__type(value, __u32);
} hb_fns SEC(".maps");

/* Direct-mapped, as a cache: a granule whose index another one takes is forgotten. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << HB_SHADOW_BITS);
	__type(key, __u32);
	__type(value, struct hb_shadow);
} hb_shadow SEC(".maps");

/* Stacks of remembered accesses, keyed by a hash of their frames. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct hb_stack);
} hb_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct hb_pair);
	__type(value, __u64);
} hb_reported SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hb_scratch);
} hb_scratch SEC(".maps");

/* The largest value hb_get() inserts. */
union hb_any {
	struct hb_thread thread;
	struct hb_proc proc;
	struct hb_sync sync;
};

/* Never written: the initial value of new entries, too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, union hb_any);
} hb_zero SEC(".maps");

static __always_inline void hb_count(enum kcsand_hb_counter c)
{
	__sync_fetch_and_add(&hb_counters[c], 1);
}

/* The BPF time of the detector's work, so that -v can show it apart from the traps. */
static __always_inline void hb_time(enum kcsand_hb_counter c, __u64 t0)
{
	__sync_fetch_and_add(&hb_counters[c], bpf_ktime_get_ns() - t0);
}

static __always_inline void *hb_zero_value(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&hb_zero, &zero);
}

/* Look up key in map, inserting a zeroed value if it is not there yet. */
static __always_inline void *hb_get(void *map, const void *key)
{
	void *v = bpf_map_lookup_elem(map, key), *z;

	if (v)
		return v;
	z = hb_zero_value();
	if (!z)
		return NULL;
	bpf_map_update_elem(map, key, z, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

/*
 * The clock loops are global functions: the verifier checks a global
 * function once per program, and a static one again at every call, which
 * made loading the history's programs take half a second.
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

__noinline int hb_vc_join_atomic_g(struct hb_vc *dst, const struct hb_vc *src)
{
	if (!dst || !src)
		return 0;
	for (int i = 0; i < HB_SLOTS; i++) {
		__u32 c = src->c[i];
		int r;

		for (r = 0; r < HB_CAS_TRIES; r++) {
			__u32 old = dst->c[i];

			if (old >= c || __sync_val_compare_and_swap(&dst->c[i], old, c) == old)
				break;
		}
		if (r == HB_CAS_TRIES)
			__sync_fetch_and_add(&hb_counters[KCSAND_HB_CTR_CAS_LOST], 1);
	}
	return 0;
}

#define hb_vc_join(dst, src) hb_vc_join_g((struct hb_vc *)(dst), (const struct hb_vc *)(src))
#define hb_vc_join_atomic(dst, src) \
	hb_vc_join_atomic_g((struct hb_vc *)(dst), (const struct hb_vc *)(src))

/*
 * A free slot of process p for a thread created by parent, taken; -1 if
 * none.  A thread with no known creator comes with a zeroed one.
 */
__noinline int hb_take_slot(struct hb_proc *p, const struct hb_thread *parent)
{
	if (!p || !parent)
		return -1;
	for (int i = 0; i < HB_SLOTS; i++) {
		__u64 bit = 1ULL << i;
		__u32 last = p->last_clock[i];

		/*
		 * A slot a thread left is taken again only by a thread whose
		 * creator knew all that thread did (it joined it): the new
		 * thread's own entry then says nothing false about the old one.
		 */
		if (last && parent->vc[i] < last)
			continue;
		if (!(p->used & bit) && !(__sync_fetch_and_or(&p->used, bit) & bit))
			return i;
	}
	return -1;
}

/*
 * A new thread: a free slot of its process, its own entry above the last
 * clock of that slot's previous thread, and what its creator knew.  With
 * more than HB_SLOTS threads alive or not joined, the new one has no
 * clock: its accesses are not checked, its sync is not traced.
 */
static __noinline struct hb_thread *hb_new_thread(__u32 tid, __u32 tgid,
						  const struct hb_thread *parent)
{
	struct hb_thread *t;
	struct hb_proc *p;
	__u32 start = 1;
	int slot;

	p = hb_get(&hb_procs, &tgid);
	if (!p)
		return NULL;
	slot = hb_take_slot(p, parent ? parent : hb_zero_value());
	if (slot >= 0)
		start = p->last_clock[slot & (HB_SLOTS - 1)] + 1;
	if (slot < 0) {
		hb_count(KCSAND_HB_CTR_NO_SLOT);
		return NULL;
	}
	t = hb_get(&hb_threads, &tid);
	if (!t)
		return NULL;
	t->slot = slot;
	t->tgid = tgid;
	/* A new thread is in no sync call yet (hb_new_gen). */
	t->gen = hb_gen;
	if (parent)
		hb_vc_join(t->vc, parent->vc);
	t->vc[slot & (HB_SLOTS - 1)] = start;
	p->cur_clock[slot & (HB_SLOTS - 1)] = start;
	return t;
}

static __always_inline struct hb_thread *hb_self(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct hb_thread *t = bpf_map_lookup_elem(&hb_threads, &tid);

	return t ? t : hb_new_thread(tid, id >> 32, NULL);
}

/* A new epoch of the thread, published for hb_acquire_all(). */
static __always_inline void hb_tick(struct hb_thread *t)
{
	__u32 s = t->slot & (HB_SLOTS - 1), tgid = t->tgid;
	struct hb_proc *p;

	t->vc[s]++;
	p = bpf_map_lookup_elem(&hb_procs, &tgid);
	if (p)
		p->cur_clock[s] = t->vc[s];
}

static __noinline void hb_release(struct hb_thread *t, __u64 addr, int new_epoch)
{
	struct hb_key k = { .tgid = t->tgid, .addr = addr };
	struct hb_sync *s = hb_get(&hb_syncs, &k);
	__u32 tgid = t->tgid;
	struct hb_proc *p;

	if (!s) {
		hb_count(KCSAND_HB_CTR_SYNC_FULL);
		p = bpf_map_lookup_elem(&hb_procs, &tgid);
		if (!p)
			return;
		hb_vc_join_atomic(p->overflow, t->vc);
		p->overflowed = 1;
	} else {
		hb_vc_join_atomic(s->vc, t->vc);
	}
	if (new_epoch && !t->once_depth)
		hb_tick(t);
}

static __noinline void hb_acquire(struct hb_thread *t, __u64 addr)
{
	struct hb_key k = { .tgid = t->tgid, .addr = addr };
	struct hb_sync *s = bpf_map_lookup_elem(&hb_syncs, &k);
	__u32 tgid = t->tgid;
	struct hb_proc *p;

	if (!s) {
		/* Never released, or released when hb_syncs was full (hb_proc.overflow). */
		p = bpf_map_lookup_elem(&hb_procs, &tgid);
		if (p && p->overflowed)
			hb_vc_join(t->vc, p->overflow);
		return;
	}
	/* Entries read while a release adds to them: each is one it had, or more. */
	hb_vc_join(t->vc, s->vc);
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
		__u32 c = p->cur_clock[i] > p->last_clock[i] ? p->cur_clock[i] : p->last_clock[i];

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
 * its process did so far, and the calls it was in are forgotten.
 */
static __always_inline void hb_new_gen(struct hb_thread *t)
{
	if (t->gen == hb_gen)
		return;
	t->gen = hb_gen;
	t->depth = 0;
	hb_acquire_all(t);
}

/* The marked load of the thread's last event has run by now: acquire what it read. */
static __always_inline void hb_settle(struct hb_thread *t)
{
	__u64 a = t->pending_acq;

	if (a) {
		t->pending_acq = 0;
		hb_acquire(t, a);
	}
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
				      __u64 addr)
{
	__u64 obj = addr & ~7ULL;

	hb_count(KCSAND_HB_CTR_MARKED);
	/* The source names the order (memory_order_relaxed ...): only what it says. */
	if ((site->flags & KCSAND_SITE_READ) && site->order != KCSAND_ORDER_RELAXED &&
	    site->order != KCSAND_ORDER_RELEASE) {
		if (site->probe_delta)
			hb_acquire(t, obj);
		else
			t->pending_acq = obj;
	}
	if ((site->flags & KCSAND_SITE_WRITE) && site->order != KCSAND_ORDER_RELAXED &&
	    site->order != KCSAND_ORDER_ACQUIRE)
		hb_release(t, obj, 1);
}

/*
 * Frames of the current access, kept once per distinct stack; 0 if not
 * kept.  A report comes later, so the copy for the CFI unwind is taken
 * now, once per stack too, and named by the key: scratch->copy_key asks
 * history_access() for it.  Without frame pointers the walk gives the
 * site alone, whatever the callers: sp, the same for the same callers in
 * one thread, tells those stacks apart.
 */
static __always_inline __u64 hb_stack_key(void *ctx, struct hb_scratch *scratch)
{
	struct pt_regs *regs = ctx;	/* a perf_event ctx starts with its registers too */
	__u64 key = 0xcbf29ce484222325ULL;
	struct hb_stack *st;
	long n;
	int nr;

	n = bpf_get_stack(ctx, scratch->stk.ip, sizeof(scratch->stk.ip), BPF_F_USER_STACK);
	if (n <= 0)
		return 0;
	nr = n / 8;
	scratch->stk.nr = nr;
	for (int i = 0; i < KCSAND_MAX_STACK; i++) {
		if (i >= nr)
			break;
		key = (key ^ scratch->stk.ip[i]) * 0x100000001b3ULL;
	}
	key = ((key ^ nr) * 0x100000001b3ULL ^ regs->sp) & ~KCSAND_USTACK_SEQ;
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

	if (!ustack_room() || !ustack_send(regs, key))
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
static __noinline void hb_report(void *ctx, const struct hb_access *a, const struct hb_cell *o,
				 __u32 tgid, __u64 now)
{
	__u64 addr = a->addr;
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
	rec->age_ns = now - o->time_ns;

	/* This side, as fill_access() would (a struct hit does not fit on the stack here). */
	__builtin_memset(&rec->this, 0, offsetof(struct kcsand_access, stack));
	rec->this.addr = addr;
	rec->this.ip = a->ip;
	rec->this.tid = (__u32)id;
	rec->this.pid = id >> 32;
	rec->this.cpu = bpf_get_smp_processor_id();
	rec->this.site = a->site_idx;
	rec->this.size = a->size;
	rec->this.type = a->type;
	rec->this.ra = a->ra;
	rec->this.ustack = a->ustack;
	bpf_get_current_comm(rec->this.comm, sizeof(rec->this.comm));
	n = bpf_get_stack(ctx, rec->this.stack, sizeof(rec->this.stack), BPF_F_USER_STACK);
	rec->this.nr_frames = n < 0 ? (__s32)n : (__s32)((__u64)n / 8);

	__builtin_memset(&rec->other, 0, offsetof(struct kcsand_access, stack));
	rec->other.addr = (addr & ~7ULL) + o->off;
	rec->other.ip = o->ip;
	rec->other.ra = o->ra;
	rec->other.tid = o->tid;
	rec->other.pid = tgid;
	rec->other.cpu = o->cpu;
	rec->other.site = o->site;
	rec->other.size = o->size;
	rec->other.type = o->type;
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

/* The bytes of a granule an access of size at offset off touches. */
static __always_inline __u8 hb_mask(__u32 off, __u32 size)
{
	__u32 n = size < 8 - off ? size : 8 - off;

	return (__u8)(((1u << n) - 1) << off);
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

/* Where the access goes: its own cell, else a free one, else one it is ordered after. */
struct hb_scan {
	int own, free, old, race;
};

static __always_inline void hb_scan(struct hb_shadow *e, struct hb_thread *t, __u32 me,
				    __u32 type, __u8 mask, struct hb_scratch *scratch,
				    struct hb_scan *r)
{
	for (int i = 0; i < HB_CELLS; i++) {
		struct hb_cell *c = &e->cell[i];
		__u32 s;

		if (!c->slot1) {
			if (r->free < 0)
				r->free = i;
			continue;
		}
		s = (c->slot1 - 1) & (HB_SLOTS - 1);
		if (s == me) {
			/*
			 * Our own, replaced by this access only if it stands for
			 * it: the same bytes or more, and a write for a read.
			 */
			if (r->own < 0 && !(c->mask & ~mask) &&
			    (!(c->type & KCSAND_ACCESS_WRITE) || (type & KCSAND_ACCESS_WRITE)))
				r->own = i;
			continue;
		}
		if (c->clock <= t->vc[s]) {
			if (r->old < 0)
				r->old = i;
			continue;
		}
		if (!r->race && (c->mask & mask) && ((c->type | type) & KCSAND_ACCESS_WRITE)) {
			scratch->found = *c;
			r->race = 1;
		}
	}
}

/* The shadow entry of an access's granule, taken (hb_entry_lock), or NULL. */
static __always_inline struct hb_shadow *hb_shadow_take(const struct hb_access *a, __u32 tgid,
							__u32 *seq)
{
	__u32 idx = hb_shadow_index(tgid, a->addr >> 3);
	struct hb_shadow *e = bpf_map_lookup_elem(&hb_shadow, &idx);

	return e && hb_entry_lock(e, seq) ? e : NULL;
}

/* *v = max(*v, ns), against other threads doing the same. */
static __always_inline void hb_max_ns(__u64 *v, __u64 ns)
{
	for (int r = 0; r < 8; r++) {
		__u64 old = *(volatile __u64 *)v;

		if (old >= ns || __sync_val_compare_and_swap(v, old, ns) == old)
			return;
	}
	/* Eight other writers in between, each raising it: a plain store, counted. */
	hb_count(KCSAND_HB_CTR_FORGET_ALL);
	*(volatile __u64 *)v = ns;
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
 * given to the next thread) moves its time; another pushes out the oldest.
 * Its fields are written ns first, as ~0, so that a check meanwhile
 * forgets more, never less; x86 keeps stores in order.
 */
static __noinline void hb_forget_wide(__u32 tgid, __u64 lo, __u64 hi, __u64 now)
{
	struct hb_proc *p = bpf_map_lookup_elem(&hb_procs, &tgid);
	struct hb_range *r;
	__u64 old;

	hb_count(KCSAND_HB_CTR_FORGET_WIDE);
	if (!p)
		return;		/* no thread of it has a clock yet: nothing remembered */
	for (int i = 0; i < HB_RANGES; i++) {
		r = &p->range[i];
		if (r->lo != lo || r->hi != hi)
			continue;
		hb_max_ns(&r->ns, now);
		/* Pushed out meanwhile by another range: forget everything before now. */
		if (*(volatile __u64 *)&r->lo != lo || *(volatile __u64 *)&r->hi != hi)
			hb_max_ns(&p->forgot_ns, now);
		return;
	}
	r = &p->range[__sync_fetch_and_add(&p->next_range, 1) & (HB_RANGES - 1)];
	old = *(volatile __u64 *)&r->ns;
	*(volatile __u64 *)&r->ns = ~0ULL;
	if (old) {
		hb_count(KCSAND_HB_CTR_FORGET_ALL);
		hb_max_ns(&p->forgot_ns, old == ~0ULL ? now : old);
	}
	*(volatile __u64 *)&r->lo = lo;
	*(volatile __u64 *)&r->hi = hi;
	*(volatile __u64 *)&r->ns = now;
}

struct hb_clear {
	__u64 granule;		/* the first */
	__u32 tgid;
	int busy;		/* an entry could not be taken: left to a wide range */
};

/* One granule of a narrow range: its shadow entry, if it holds the granule, emptied. */
static long hb_clear_one(__u32 i, void *ctx)
{
	struct hb_clear *c = ctx;
	__u64 granule = c->granule + i;
	__u32 idx = hb_shadow_index(c->tgid, granule), seq;
	struct hb_shadow *e = bpf_map_lookup_elem(&hb_shadow, &idx);

	if (!e || e->tgid != c->tgid || e->granule != granule || e->gen != hb_gen)
		return 0;
	seq = *(volatile __u32 *)&e->seq;
	if ((seq & 1) || __sync_val_compare_and_swap(&e->seq, seq, seq + 1) != seq) {
		c->busy = 1;
		return 1;
	}
	if (e->tgid == c->tgid && e->granule == granule)
		for (int k = 0; k < HB_CELLS; k++)
			e->cell[k].slot1 = 0;
	__sync_lock_test_and_set(&e->seq, seq + 2);
	return 0;
}

/* Forget what was remembered of [lo, hi) in process tgid. */
static __noinline void hb_forget(__u32 tgid, __u64 lo, __u64 hi)
{
	struct hb_clear c = { .granule = lo >> 3, .tgid = tgid };
	__u64 n = ((hi + 7) >> 3) - (lo >> 3);

	if (hi <= lo)
		return;
	hb_count(KCSAND_HB_CTR_FORGET_OPS);
	if (n <= HB_FORGET_CLEAR) {
		bpf_loop(n, hb_clear_one, &c, 0);
		if (!c.busy)
			return;
	}
	hb_forget_wide(tgid, lo, hi, bpf_ktime_get_ns());
}

/*
 * Check one plain access against the remembered ones of its granule, in
 * its entry e that the caller took (seq: the entry's sequence before),
 * and remember it, with its stack unless this site already is in this
 * epoch.  The caller takes the entry: its bpf_loop() callback is a frame
 * of its own to 6.1's verifier, and on top of this function's the frames
 * passed the 512 bytes of stack that a whole call chain may use.
 */
static __noinline int hb_check(void *ctx, struct hb_scratch *scratch, struct hb_thread *t,
			       struct hb_shadow *e, __u32 seq)
{
	const struct hb_access *a = &scratch->acc;
	__u32 me = t->slot & (HB_SLOTS - 1), tgid = t->tgid;
	__u32 clock = t->vc[me], type = a->type;
	__u64 granule = a->addr >> 3, now = bpf_ktime_get_ns();
	__u8 mask = hb_mask(a->addr & 7, a->size);
	struct hb_scan r = { -1, -1, -1, 0 };
	struct hb_cell *c;
	int claimed = 0;

	/* e is not NULL: the one caller tests it, and the verifier knows (a static call). */
	scratch->now = now;
	hb_count(KCSAND_HB_CTR_CHECKED);
	if (e->tgid != tgid || e->granule != granule || e->gen != hb_gen) {
		claimed = e->tgid && e->gen == hb_gen ? 2 : 1;
		e->tgid = tgid;
		e->granule = granule;
		e->gen = hb_gen;
		for (int i = 0; i < HB_CELLS; i++)
			e->cell[i].slot1 = 0;
	}
	hb_scan(e, t, me, type, mask, scratch, &r);
	c = &e->cell[(r.own >= 0 ? r.own : r.free >= 0 ? r.free : r.old >= 0 ? r.old :
		      (int)(bpf_get_prandom_u32() % HB_CELLS)) & (HB_CELLS - 1)];
	if (!(r.own >= 0 && c->site == a->site_idx && c->clock == clock && c->mask == mask)) {
		c->ip = a->ip;
		c->ra = a->ra;
		c->stack_key = hb_stack_key(ctx, scratch);
		c->time_ns = now;
		c->tid = (__u32)bpf_get_current_pid_tgid();
		c->clock = clock;
		c->site = a->site_idx;
		c->slot1 = me + 1;
		c->cpu = bpf_get_smp_processor_id();
		c->mask = mask;
		c->type = type;
		c->size = a->size;
		c->off = a->addr & 7;
	}
	__sync_lock_test_and_set(&e->seq, seq + 2);

	if (claimed)
		hb_count(claimed == 1 ? KCSAND_HB_CTR_SHADOW_LIVE : KCSAND_HB_CTR_SHADOW_EVICTED);
	if (r.race)
		hb_count(KCSAND_HB_CTR_RACES);
	return r.race;
}

/*
 * A sampled access (an armed site's uprobe, or its execute breakpoint in a
 * hot turn).  Kernel mode stays KCSAN-only: hb_enabled is never set there.
 */
static __always_inline void history_access(void *ctx, struct pt_regs *regs, __u32 site_idx,
					   __u64 probe_ip)
{
	const struct kcsand_site *site;
	struct hb_scratch *scratch;
	struct hb_shadow *e;
	struct hb_thread *t;
	__u32 zero = 0, seq;
	__u64 ip, t0;

	if (!hb_traced() || hb_paused)
		return;
	t0 = bpf_ktime_get_ns();
	site = bpf_map_lookup_elem(&sites, &site_idx);
	if (!site || (site->flags & KCSAND_SITE_DATA_RACE))
		return;
	t = hb_self();
	if (!t)
		return;
	hb_new_gen(t);
	hb_settle(t);
	scratch = bpf_map_lookup_elem(&hb_scratch, &zero);
	if (!scratch)
		return;
	ip = probe_ip - site->probe_delta;
	scratch->acc.ip = ip;
	scratch->acc.addr = site_address(site, regs, ip);
	/* A plain load or store of a learned atomic: acquire or release, as a marked one. */
	if ((site->flags & KCSAND_SITE_MARKED) || atomic_learned(site, scratch->acc.addr)) {
		hb_marked(t, site, scratch->acc.addr);
		hb_time(KCSAND_HB_CTR_SYNC_NS, t0);
		return;
	}
	scratch->acc.site_idx = site_idx;
	scratch->acc.size = site->size;
	scratch->acc.type = site_access_type(site);
	scratch->acc.ra = 0;
	if (site->ra_off >= 0)
		bpf_probe_read_user(&scratch->acc.ra, sizeof(scratch->acc.ra),
				    (void *)(regs->sp + site->ra_off));
	scratch->copy_key = 0;
	/* Reported from here: the two calls' frames would not fit next to the engine's. */
	e = hb_shadow_take(&scratch->acc, t->tgid, &seq);
	/* Not from hb_check(): its frame and this one's would pass the 512 bytes. */
	if (e)
		hb_drop_forgotten_g(e, t->tgid, scratch->acc.addr);
	if (e && hb_check(ctx, scratch, t, e, seq) &&
	    hb_report_due(scratch->found.site, site_idx, scratch->now)) {
		/* Before the report, as a watcher's (engine.bpf.h's emit_report). */
		scratch->acc.ustack = ustack_send_seq(regs, 1);
		hb_report(ctx, &scratch->acc, &scratch->found, t->tgid, scratch->now);
	}
	if (scratch->copy_key)
		hb_stack_copy(regs, scratch->copy_key);
	hb_time(KCSAND_HB_CTR_ACCESS_NS, t0);
}

/* Sync calls whose return is probed remember their arguments until then. */
static __always_inline void hb_push(struct hb_thread *t, __u32 op, __u64 a0, __u64 a1)
{
	__u32 d = t->depth++;

	if (d < HB_DEPTH) {
		t->op[d] = op;
		t->arg0[d] = a0;
		t->arg1[d] = a1;
	}
}

static __always_inline int hb_pop(struct hb_thread *t, __u32 op, __u64 *a0, __u64 *a1)
{
	__u32 d;

	if (!t->depth)
		return -1;
	d = --t->depth;
	if (d >= HB_DEPTH)
		return -1;
	if (t->op[d] != op) {
		/* A return went unseen (longjmp out of a lock call): start over. */
		t->depth = 0;
		return -1;
	}
	*a0 = t->arg0[d];
	*a1 = t->arg1[d];
	return 0;
}

static __always_inline void hb_mark_fn(struct hb_thread *t, __u64 fn, __u32 kind)
{
	struct hb_key k = { .tgid = t->tgid, .addr = fn };

	bpf_map_update_elem(&hb_fns, &k, &kind, BPF_ANY);
}

static __always_inline __u32 hb_fn_kind(struct hb_thread *t, __u64 fn)
{
	struct hb_key k = { .tgid = t->tgid, .addr = fn };
	__u32 *kind = bpf_map_lookup_elem(&hb_fns, &k);

	return kind ? *kind : 0;
}

static __always_inline struct hb_thread *hb_sync_thread(void)
{
	struct hb_thread *t;

	if (!hb_traced())
		return NULL;
	t = hb_self();
	if (!t)
		return NULL;
	hb_new_gen(t);
	hb_settle(t);
	hb_count(KCSAND_HB_CTR_SYNC_OPS);
	return t;
}

/* The object an OpenMP barrier, critical, atomic or ordered region syncs on. */
static __always_inline __u64 hb_omp_region(__u32 op)
{
	switch (op) {
	case KCSAND_HB_OMP_BARRIER:
		return HB_OBJ_OMP_BARRIER;
	case KCSAND_HB_OMP_CRIT_START:
	case KCSAND_HB_OMP_CRIT_END:
		return HB_OBJ_OMP_CRITICAL;
	case KCSAND_HB_OMP_ATOMIC_START:
	case KCSAND_HB_OMP_ATOMIC_END:
		return HB_OBJ_OMP_ATOMIC;
	default:
		return HB_OBJ_OMP_ORDERED;
	}
}

/*
 * A heap block freed (free, or realloc's old block): its size is in
 * glibc's chunk header, the word before it, with flags in the low 3 bits.
 * The block's bytes run to the end of its chunk, and on into the next
 * chunk's first word, unless the chunk was mmapped (bit 1).
 */
static __always_inline void hb_forget_block(__u32 tgid, __u64 block)
{
	__u64 head, size;

	if (!block || bpf_probe_read_user(&head, sizeof(head), (void *)(block - 8)))
		return;
	size = head & ~7ULL;
	if (size < 32 || size > (1ULL << 40))
		return;		/* not a glibc chunk: another allocator's block */
	hb_forget(tgid, block, block + size - (head & 2 ? 16 : 8));
}

#define HB_MAP_FIXED	0x10

/*
 * Memory changing owner: see hb_forget().  Whether or not the thread has a
 * clock.  Returns whether op is one of these.
 */
static __always_inline int hb_lifetime(struct pt_regs *ctx, __u32 op, __u64 a0, __u64 a1)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (op != KCSAND_HB_FREE && op != KCSAND_HB_UNMAP && op != KCSAND_HB_MAP)
		return 0;
	if (!hb_traced())
		return 1;
	hb_count(KCSAND_HB_CTR_SYNC_OPS);
	if (op == KCSAND_HB_FREE)
		hb_forget_block(tgid, a0);
	else if (op == KCSAND_HB_UNMAP || (PT_REGS_PARM4(ctx) & HB_MAP_FIXED))
		hb_forget(tgid, a0, a0 + a1);
	return 1;
}

/*
 * The sync object of a file descriptor: what the writing end and the
 * reading end share, found from the calling task's descriptor table.
 * - a socket: the connection.  A Unix socket pair's two socks point at
 *   each other, so the lower address of the two names it; a TCP or UDP
 *   socket is named by its two ends, address and port, in a fixed order,
 *   hashed into a range no address reaches (bit 63 set, bit 62 clear).
 * - an eventfd, a signalfd, ... (files of the anonymous inode, which they
 *   all share): the file's own object.
 * - a pipe, a FIFO, a regular file: the inode.
 * 0 when there is no such descriptor.
 */
#define HB_S_IFMT		00170000
#define HB_S_IFSOCK		0140000
#define HB_ANON_INODE_MAGIC	0x09041934
#define HB_AF_UNIX		1
#define HB_AF_INET		2
#define HB_AF_INET6		10

static __always_inline __u64 hb_sock_object(struct file *f)
{
	struct socket *sock = BPF_CORE_READ(f, private_data);
	struct sock *sk = BPF_CORE_READ(sock, sk), *peer;
	__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
	__u64 a, b;

	if (family == HB_AF_UNIX) {
		peer = BPF_CORE_READ((struct unix_sock *)sk, peer);
		a = (__u64)sk;
		b = peer ? (__u64)peer : a;
		return a < b ? a : b;
	}
	if (family != HB_AF_INET && family != HB_AF_INET6)
		return (__u64)sk;
	a = (__u64)BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr) << 16 |
	    BPF_CORE_READ(sk, __sk_common.skc_num);
	b = (__u64)BPF_CORE_READ(sk, __sk_common.skc_daddr) << 16 |
	    bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (a > b) {
		__u64 x = a;

		a = b;
		b = x;
	}
	return 1ULL << 63 | (((a * 0x9e3779b97f4a7c15ULL) ^ b ^ family) & ((1ULL << 62) - 1));
}

static __noinline __u64 hb_fd_object(__u64 fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd), *f = NULL;
	struct inode *inode;

	if (fd >= BPF_CORE_READ(fdt, max_fds) ||
	    bpf_probe_read_kernel(&f, sizeof(f), fds + fd) || !f)
		return 0;
	inode = BPF_CORE_READ(f, f_inode);
	if ((BPF_CORE_READ(inode, i_mode) & HB_S_IFMT) == HB_S_IFSOCK)
		return hb_sock_object(f);
	if (BPF_CORE_READ(inode, i_sb, s_magic) == HB_ANON_INODE_MAGIC)
		return (__u64)BPF_CORE_READ(f, private_data);
	return (__u64)inode;
}

/*
 * write() and the like release into fd's object; read() and the like name
 * it now, for their return, as another thread may close fd meanwhile.
 */
static __always_inline __u64 hb_fd_entry(struct hb_thread *t, __u32 op, __u64 fd)
{
	__u64 obj = hb_fd_object(fd);

	if (op == KCSAND_HB_FD_WRITE && obj)
		hb_release(t, obj, 1);
	return obj;
}

SEC("uprobe")
int kcsand_hb_entry(struct pt_regs *ctx)
{
	__u32 op = (__u32)bpf_get_attach_cookie(ctx);
	__u64 a0 = PT_REGS_PARM1(ctx), a1 = PT_REGS_PARM2(ctx), t0 = bpf_ktime_get_ns();
	struct hb_thread *t;

	if (hb_lifetime(ctx, op, a0, a1)) {
		hb_time(KCSAND_HB_CTR_SYNC_NS, t0);
		return 0;
	}
	t = hb_sync_thread();
	if (!t)
		return 0;
	switch (op) {
	case KCSAND_HB_UNLOCK:
	case KCSAND_HB_COND_SIGNAL:
	case KCSAND_HB_BARRIER:
		hb_release(t, a0, 1);
		break;
	case KCSAND_HB_COND_WAIT:
		hb_release(t, a1, 1);
		break;
	case KCSAND_HB_ONCE:
		/*
		 * The init routine may run in this thread, unseen: its accesses
		 * keep the epoch released here, so that whoever returns from
		 * pthread_once() later has acquired them.
		 */
		hb_release(t, a0, 0);
		t->once_depth++;
		break;
	case KCSAND_HB_OMP_PARALLEL:
		hb_mark_fn(t, a0, HB_FN_PARALLEL);
		hb_release(t, a0, 1);
		break;
	case KCSAND_HB_OMP_TASK:
	case KCSAND_HB_OMP_TASKLOOP:
		hb_mark_fn(t, a0, HB_FN_TASK);
		hb_release(t, a0, 1);
		break;
	case KCSAND_HB_FD_WRITE:
	case KCSAND_HB_FD_READ:
		a0 = hb_fd_entry(t, op, a0);
		break;
	case KCSAND_HB_OMP_FN:
		/* Probed at the function's entry: ip is the function. */
		a0 = PT_REGS_IP(ctx);
		hb_acquire(t, a0);
		if (hb_fn_kind(t, a0) == HB_FN_TASK)
			hb_acquire(t, HB_OBJ_OMP_TASKS);	/* depend: its inputs are done */
		break;
	case KCSAND_HB_OMP_BARRIER:
	case KCSAND_HB_OMP_CRIT_END:
	case KCSAND_HB_OMP_ATOMIC_END:
	case KCSAND_HB_OMP_ORDERED_END:
		hb_release(t, hb_omp_region(op), 1);
		break;
	}
	if (KCSAND_HB_HAS_RETURN(op))
		hb_push(t, op, a0, a1);
	hb_time(KCSAND_HB_CTR_SYNC_NS, t0);
	return 0;
}

/* pthread_join(): the clock the thread ended with; it may not have passed the exit tracepoint. */
static __always_inline void hb_join_thread(struct hb_thread *t, __u64 pthread)
{
	struct hb_key k = { .tgid = t->tgid, .addr = pthread };
	struct hb_thread *o;
	__u32 *tid;

	tid = bpf_map_lookup_elem(&hb_pthreads, &k);
	if (!tid) {
		/* Created while the sync probes were off: pthread_create()'s return went unseen. */
		if (hb_gen)
			hb_acquire_all(t);
		return;
	}
	o = bpf_map_lookup_elem(&hb_exited, tid);
	if (!o)
		o = bpf_map_lookup_elem(&hb_threads, tid);
	if (o)
		hb_vc_join(t->vc, o->vc);
}

/* The OpenMP runtime's calls, as they return. */
static __always_inline void hb_return_omp(struct hb_thread *t, __u32 op, __u64 a0)
{
	switch (op) {
	case KCSAND_HB_OMP_PARALLEL:
		hb_acquire(t, HB_OBJ_OMP_END);
		hb_acquire(t, HB_OBJ_OMP_TASKS);
		break;
	case KCSAND_HB_OMP_TASKLOOP:
	case KCSAND_HB_OMP_TASKWAIT:
		hb_acquire(t, HB_OBJ_OMP_TASKS);
		break;
	case KCSAND_HB_OMP_FN:
		if (hb_fn_kind(t, a0) == HB_FN_TASK)
			hb_release(t, HB_OBJ_OMP_TASKS, 0);
		hb_release(t, HB_OBJ_OMP_END, 1);
		break;
	case KCSAND_HB_OMP_BARRIER:
		hb_acquire(t, HB_OBJ_OMP_BARRIER);
		hb_acquire(t, HB_OBJ_OMP_TASKS);	/* tasks run to completion at barriers */
		break;
	case KCSAND_HB_OMP_CRIT_START:
	case KCSAND_HB_OMP_ATOMIC_START:
	case KCSAND_HB_OMP_ORDERED_START:
		hb_acquire(t, hb_omp_region(op));
		break;
	}
}

/* pthread's calls, as they return (a0, a1: their arguments, saved at entry). */
static __always_inline void hb_return_pthread(struct hb_thread *t, __u32 op, int rc, __u64 a0,
					      __u64 a1)
{
	__u64 pthread = 0;

	switch (op) {
	case KCSAND_HB_LOCK:
		if (rc == 0)
			hb_acquire(t, a0);
		break;
	case KCSAND_HB_LOCK_NZ:
		if (rc != 0)
			hb_acquire(t, a0);
		break;
	case KCSAND_HB_LOCK_VOID:
	case KCSAND_HB_BARRIER:
		hb_acquire(t, a0);
		break;
	case KCSAND_HB_COND_WAIT:
		hb_acquire(t, a0);
		hb_acquire(t, a1);
		break;
	case KCSAND_HB_ONCE:
		hb_acquire(t, a0);
		if (t->once_depth && !--t->once_depth)
			hb_tick(t);
		break;
	case KCSAND_HB_CREATE:
		if (rc == 0 && !bpf_probe_read_user(&pthread, sizeof(pthread), (void *)a0)) {
			struct hb_key k = { .tgid = t->tgid, .addr = pthread };
			__u32 child = t->last_child;

			bpf_map_update_elem(&hb_pthreads, &k, &child, BPF_ANY);
		}
		break;
	case KCSAND_HB_JOIN:
		if (rc == 0)
			hb_join_thread(t, a0);
		break;
	default:
		hb_return_omp(t, op, a0);
		break;
	}
}

static __always_inline void hb_return(struct pt_regs *ctx, struct hb_thread *t, __u32 op)
{
	int rc = (int)PT_REGS_RC(ctx);
	__u64 a0, a1;

	if (op == KCSAND_HB_LOCK_RDI) {
		if (rc == 0)
			hb_acquire(t, PT_REGS_PARM1(ctx));
		return;
	}
	if (hb_pop(t, op, &a0, &a1)) {
		/*
		 * Its call was not remembered (nested deeper than HB_DEPTH,
		 * entered during a pause, a longjmp in between): whatever it
		 * acquired is unknown, so it acquires every epoch so far.
		 */
		hb_count(KCSAND_HB_CTR_RETURN_LOST);
		hb_acquire_all(t);
		return;
	}
	if (op == KCSAND_HB_FD_READ) {
		/* A count of bytes, not an int: a large read must not look like an error. */
		if ((long)PT_REGS_RC(ctx) > 0 && a0)
			hb_acquire(t, a0);
		return;
	}
	hb_return_pthread(t, op, rc, a0, a1);
}

SEC("uretprobe")
int kcsand_hb_return(struct pt_regs *ctx)
{
	__u32 op = (__u32)bpf_get_attach_cookie(ctx);
	__u64 t0 = bpf_ktime_get_ns();
	struct hb_thread *t = hb_sync_thread();

	if (t) {
		hb_return(ctx, t, op);
		hb_time(KCSAND_HB_CTR_SYNC_NS, t0);
	}
	return 0;
}

struct hb_vma {
	__u64 start, end;
};

static long hb_vma_of(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct hb_vma *v = data;

	v->start = vma->vm_start;
	v->end = vma->vm_end;
	return 0;
}

/*
 * A new thread's stack, and its static TLS and descriptor, which glibc
 * puts at the top of the same mapping: another thread that ended may have
 * used them (glibc caches stacks), so they are forgotten.  The mapping is
 * the one its stack pointer starts in; a stack the program gave (in its
 * heap, say) is bounded to HB_STACK_MAX around it.
 */
#define HB_STACK_MAX	(64ULL << 20)

static __always_inline void hb_forget_stack(struct task_struct *child, __u32 tgid)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(child);
	struct hb_vma v = {};
	__u64 sp;

	if (!regs)
		return;
	sp = BPF_CORE_READ(regs, sp);
	if (!sp || bpf_find_vma(child, sp - 1, hb_vma_of, &v, 0) || v.end <= v.start)
		return;
	if (sp - v.start > HB_STACK_MAX)
		v.start = sp - HB_STACK_MAX;
	if (v.end - sp > HB_STACK_MAX)
		v.end = sp + HB_STACK_MAX;
	hb_forget(tgid, v.start, v.end);
}

/* A new thread of a traced process starts with what its creator knew (pthread_create). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(kcsand_hb_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u32 cpid = BPF_CORE_READ(child, pid);
	struct hb_thread *p;

	/* A new process starts its own history, empty. */
	if (ptgid != ctgid || !hb_traced())
		return 0;
	p = hb_self();
	if (!p)
		return 0;
	hb_settle(p);
	hb_count(KCSAND_HB_CTR_SYNC_OPS);
	hb_forget_stack(child, ctgid);
	hb_new_thread(cpid, ctgid, p);
	p->last_child = cpid;
	hb_tick(p);
	return 0;
}

/* A thread's end: its clock kept for pthread_join(), its slot given back. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(kcsand_hb_exit, struct task_struct *task)
{
	__u32 tid = BPF_CORE_READ(task, pid), tgid = BPF_CORE_READ(task, tgid);
	struct hb_thread *t;
	struct hb_proc *p;
	__u32 slot, last;

	if (!hb_enabled)
		return 0;
	t = bpf_map_lookup_elem(&hb_threads, &tid);
	if (!t)
		goto out;
	bpf_map_update_elem(&hb_exited, &tid, t, BPF_ANY);
	slot = t->slot & (HB_SLOTS - 1);
	last = t->vc[slot];
	p = bpf_map_lookup_elem(&hb_procs, &tgid);
	if (p) {
		p->last_clock[slot] = last;
		__sync_fetch_and_and(&p->used, ~(1ULL << slot));
	}
	bpf_map_delete_elem(&hb_threads, &tid);
out:
	if (BPF_CORE_READ(task, signal, live.counter) == 0) {
		bpf_map_delete_elem(&hb_procs, &tgid);
		bpf_map_delete_elem(&hb_tgids, &tgid);
	}
	return 0;
}

#endif

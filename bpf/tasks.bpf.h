/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenMP tasks on clocks of their own (docs/history.md, "OpenMP tasks").
 *
 * A thread runs its team's tasks as they come: at a barrier, in a
 * taskwait, inside GOMP_task itself for if(0).  On the thread's clock, two
 * sibling tasks it runs one after the other would look ordered by program
 * order, and a task would start after all its thread did before.  So a
 * task is a context of its own, as a fiber is to TSan: while it runs it
 * holds a slot of its process's clocks, it starts from the clock its
 * creator had when it created it, joined with the ends of the tasks its
 * depend clauses wait for, and at its end it releases into what waits for
 * it: its parent's taskwait, its taskgroup, its dependent tasks, barriers.
 * The thread's own clock is set aside meanwhile, and restored.
 *
 * A task's start is matched to its creation by its arguments: libgomp
 * copies GOMP_task's data (arg_size bytes, when no cpyfn copies them) and
 * later calls fn with the copy, on any thread.  GOMP_task's entry records
 * the creation under fn and the first HB_TASK_ARG bytes of data; fn's
 * entry finds it under fn and the same bytes of its argument.  Tasks
 * created under one key before the first of them starts share the record:
 * the join of their creators' clocks, which is later than each (order
 * added, none lost); if they differ in parent, taskgroup or depend list,
 * the record is vague: its task starts after every finished task and ends
 * into the orphans' object, which every taskwait and taskgroup acquires.
 *
 * Included by history.bpf.h after history_clock.bpf.h (hb_release,
 * hb_acquire, hb_take_slot) and before history_sync.bpf.h, whose probes
 * call it.
 */
#ifndef KCSAND_TASKS_BPF_H
#define KCSAND_TASKS_BPF_H

#define HB_TASK_DEPS	16	/* depend addresses a task keeps; more make it vague */
#define HB_TASK_LEVELS	32	/* tasks nested on one thread (a taskwait runs tasks inside) */
#define HB_TASK_GROUPS	8	/* taskgroups open in one task; deeper ones share the 8th */
#define HB_TASK_ARG	64	/* bytes of a task's arguments in its key */
#define HB_TASK_MARKS	8	/* a thread's stack marks (hb_task_mark_stack) */
#define HB_TASK_ON_THREAD	(~0U)	/* hb_task_ctx.own: the task runs on its thread's clock */

/* Tasks whose parent is not known end into this; taskwait and taskgroup acquire it. */
#define HB_OBJ_OMP_ORPHANS	7

/* Sync objects of tasks, in bits 56-62 above any user address (fd objects set bit 63). */
#define HB_NS_CHILDREN	1ULL	/* a context's finished children, for its taskwait */
#define HB_NS_GROUP	2ULL	/* a taskgroup's finished tasks and descendants */
#define HB_NS_DEP_ALL	3ULL	/* finished tasks with any dependence on an address */
#define HB_NS_DEP_OUT	4ULL	/* of them, those with out or inout */
#define HB_NS_SECTIONS	5ULL	/* the sections a thread ended, until its construct's end */
#define HB_NS_TEAMS	6ULL	/* the host teams a thread ended, until its construct's end */
#define HB_NS_DETACH	7ULL	/* an event's omp_fulfill_event()s, until its task's end */
#define HB_NS(ns, v)	((ns) << 56 | ((v) & ((1ULL << 56) - 1)))
/* depend orders sibling tasks only: an address's objects are their parent's. */
#define HB_DEP(ns, c, i)	HB_NS(ns, (c)->dep[i] ^ (c)->parent * 0x9e3779b97f4a7c15ULL)

#define HB_GOMP_TASK_DEPEND	8	/* GOMP_task's flags: depend is a list */
#define HB_GOMP_TASK_DETACH	0x2000	/* ... and detach(event): its 10th argument, &event */
#define HB_TASK_VAGUE		1	/* starts after every finished task */
#define HB_TASK_SECTION		2	/* a section of a sections construct (hb_task_section) */
#define HB_TASK_TEAM		4	/* a team of a host `teams` construct (hb_task_section) */

/* A task from its creation to its start, keyed by hb_task_key(). */
struct hb_task_new {
	__u64 parent;		/* the creating context's id; 0: not known */
	__u64 group;		/* the innermost taskgroup at its creation; 0: none */
	__u32 pending;		/* created and not started under this key */
	__u32 flags;
	__u32 ndep, nout;	/* depend addresses, out and inout first */
	__u64 dep[HB_TASK_DEPS];
	__u32 vc[HB_SLOTS];	/* the creator's clock, in GOMP_task's own epoch */
};

/*
 * A context on a thread: level 0 is the thread's own (its implicit task),
 * level n the n-th task nested on it.  A task's record also keeps the
 * clock and slot of the context below, which its end restores.
 */
struct hb_task_ctx {
	__u64 id;		/* level 0: the tid; a task: 1 << 32 | a number */
	__u64 parent;
	__u32 depth;		/* level 0: how many tasks run nested on the thread now */
	__u32 flags;
	__u32 own;		/* the task's slot, or HB_TASK_ON_THREAD */
	__u32 below;		/* the slot of the context below */
	__u32 ndep, nout;
	__u32 ngroup;		/* taskgroups it opened and has not closed */
	__u32 __pad;
	__u64 event;		/* detach(event): the handle omp_fulfill_event() is given; or 0 */
	__u64 group[HB_TASK_GROUPS + 1];	/* [0]: inherited, [ngroup]: the innermost */
	__u64 dep[HB_TASK_DEPS];
	__u32 vc[HB_SLOTS];	/* the clock of the context below */
	/*
	 * Level 0: the end of the thread's stack mapping (the main thread's
	 * grows down: its start moves), and when its frames below an sp died.
	 */
	__u64 stack_hi;
	__u32 nmarks;
	__u32 __pad2;
	struct {
		__u64 sp, ns;	/* sp decreasing, ns increasing with the index */
	} mark[HB_TASK_MARKS];
};

struct hb_task_level_key {
	__u32 tid;
	__u32 level;
};

/*
 * What a task function's start needs to know: which bytes of its argument
 * the key hashes.  A detached task's first word is its event, which
 * libgomp writes into GOMP_task's data after the entry read it (and into
 * the task's copy): left out of the key, and read at the start.
 */
struct hb_task_fn {
	__u32 arg;
	__u32 loop;		/* GOMP_taskloop's: its tasks have no record */
	__u32 skip;		/* bytes at the start of the argument the key leaves out */
	__u32 detach;		/* its tasks have detach(event): the argument starts with it */
};

/*
 * A detached task's completion is its omp_fulfill_event(), which may come
 * after its fn returned, from any thread: what waits for the task waits
 * for the fulfilment.  A task that ended before it keeps its context here,
 * by event, for the fulfiller to release into the objects it waited on.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct hb_key);
	__type(value, struct hb_task_ctx);
} hb_detached SEC(".maps");

_Static_assert(sizeof(struct hb_task_ctx) <= sizeof(union hb_any), "hb_get()'s zero value");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct hb_key);
	__type(value, struct hb_task_new);
} hb_task_news SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct hb_task_level_key);
	__type(value, struct hb_task_ctx);
} hb_task_ctxs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct hb_key);
	__type(value, struct hb_task_fn);
} hb_task_fns SEC(".maps");

/* Whose stack a mapping is: {tgid, its end} -> tid, for hb_task_stack_dead(). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct hb_key);
	__type(value, __u32);
} hb_task_stacks SEC(".maps");

/* A creation being recorded: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hb_task_new);
} hb_task_scratch SEC(".maps");

__u64 hb_task_ids;
/* A depend list was not kept (too long, depobj, two lists under one key): see hb_task_edges_in. */
__u32 hb_task_vague_deps;

static __always_inline struct hb_task_ctx *hb_task_level(__u32 level)
{
	struct hb_task_level_key k = { .tid = (__u32)bpf_get_current_pid_tgid(), .level = level };

	return bpf_map_lookup_elem(&hb_task_ctxs, &k);
}

/* The thread's own context, made at its first use. */
static __always_inline struct hb_task_ctx *hb_task_base(void)
{
	struct hb_task_level_key k = { .tid = (__u32)bpf_get_current_pid_tgid() };
	struct hb_task_ctx *c = hb_get(&hb_task_ctxs, &k);

	if (c && !c->id)
		c->id = k.tid;
	return c;
}

/* The context running on the thread now: the innermost task, else the thread's own. */
static __always_inline struct hb_task_ctx *hb_task_top(void)
{
	struct hb_task_ctx *base = hb_task_base(), *top;

	if (!base || !base->depth)
		return base;
	top = hb_task_level(base->depth);
	return top ? top : base;
}

static __always_inline __u64 hb_task_group(const struct hb_task_ctx *c)
{
	__u32 n = c->ngroup;

	if (n > HB_TASK_GROUPS)
		n = HB_TASK_GROUPS;
	return c->group[n];
}

/* fn and the first bytes of a task's arguments: GOMP_task's data, or fn's copy of it. */
__noinline __u64 hb_task_key(__u64 fn, __u64 data, __u32 size)
{
	__u64 h = (fn ^ 0xcbf29ce484222325ULL) * 0x100000001b3ULL, w;

	if (size > HB_TASK_ARG)
		size = HB_TASK_ARG;
	for (__u32 off = 0; off < HB_TASK_ARG; off += 8) {
		if (off >= size)
			break;
		w = 0;
		if (size - off >= 8) {
			bpf_probe_read_user(&w, 8, (void *)(data + off));
		} else {
			__u32 rem = size - off;

			/*
			 * Clamped where the compiler cannot fold it away: 6.1's
			 * verifier saw "& 7" as up to 15 bytes into 8.
			 */
			barrier_var(rem);
			if (rem > 7)
				rem = 7;
			bpf_probe_read_user(&w, rem, (void *)(data + off));
		}
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	}
	return h;
}

/*
 * GOMP_task's depend list, in either of libgomp's layouts: {n, out, addr...}
 * with out and inout first, or OpenMP 5's {0, n, out, mutexinoutset, in,
 * addr...}, depobj entries after the in ones.  A mutexinoutset is kept as
 * an inout: the tasks of the set run one at a time anyway.
 */
__noinline int hb_task_read_deps(struct hb_task_new *n, __u64 depend)
{
	__u64 hdr[5] = {}, base, total, nout, nin;
	__u32 bytes;

	if (!n || bpf_probe_read_user(hdr, sizeof(hdr), (void *)depend))
		goto vague;
	if (hdr[0]) {
		total = hdr[0];
		nout = hdr[1];
		nin = total - nout;
		base = depend + 16;
	} else {
		total = hdr[1];
		nout = hdr[2] + hdr[3];
		nin = hdr[4];
		base = depend + 40;
	}
	if (total > HB_TASK_DEPS || nout > total || nout + nin != total)
		goto vague;
	bytes = total * 8;
	if (bytes > sizeof(n->dep) || (bytes && bpf_probe_read_user(n->dep, bytes, (void *)base)))
		goto vague;
	n->ndep = total;
	n->nout = nout;
	return 0;
vague:
	/* Its successors cannot wait on its addresses: tasks with depend start after all. */
	hb_task_vague_deps = 1;
	if (n)
		n->flags |= HB_TASK_VAGUE;
	return 0;
}

/* A second creation under a key whose first has not started: one record for both. */
static __always_inline void hb_task_merge(struct hb_task_new *n, const struct hb_task_new *s)
{
	int same = n->parent == s->parent && n->group == s->group && n->ndep == s->ndep &&
		   n->nout == s->nout;

	for (int i = 0; i < HB_TASK_DEPS; i++)
		if (i < n->ndep && n->dep[i] != s->dep[i])
			same = 0;
	hb_vc_join(n->vc, s->vc);
	n->flags |= s->flags;
	if (same)
		return;
	n->flags |= HB_TASK_VAGUE;
	n->parent = 0;
	n->group = 0;
	if (n->ndep || s->ndep)
		hb_task_vague_deps = 1;
}

/*
 * GOMP_task's entry: the creation's record, in the epoch the caller
 * started for the call (hb_task_entry), which its return ends.  fn's arguments at entry:
 * fn, data, cpyfn, arg_size, arg_align, if_clause; flags and depend on
 * the stack, above the return address.  arg: the bytes of data in the
 * task's key (hb_task_entry); sp: the stack pointer at entry.  A global
 * function, verified once: the registers it reads are its arguments.
 */
__noinline int hb_task_create(struct hb_thread *t, __u64 fn, __u64 data, __u32 arg, __u64 sp)
{
	struct hb_key k = { .addr = fn };
	struct hb_task_ctx *cur = hb_task_top();
	struct hb_task_fn f = { .arg = arg };
	struct hb_task_new *s, *n;
	__u32 zero = 0, flags = 0;
	__u64 depend = 0;

	s = bpf_map_lookup_elem(&hb_task_scratch, &zero);
	if (!t || !cur || !s)
		return 0;
	k.tgid = t->tgid;
	bpf_probe_read_user(&flags, sizeof(flags), (void *)(sp + 8));
	if (flags & HB_GOMP_TASK_DETACH) {
		f.detach = 1;
		f.skip = f.arg < 8 ? f.arg : 8;
	}
	bpf_map_update_elem(&hb_task_fns, &k, &f, BPF_ANY);
	__builtin_memset(s, 0, offsetof(struct hb_task_new, vc));
	s->parent = cur->id;
	s->group = hb_task_group(cur);
	if ((flags & HB_GOMP_TASK_DEPEND) &&
	    !bpf_probe_read_user(&depend, sizeof(depend), (void *)(sp + 16)) && depend)
		hb_task_read_deps(s, depend);
	__builtin_memcpy(s->vc, t->vc, sizeof(s->vc));
	k.addr = hb_task_key(fn, data + f.skip, f.arg - f.skip);
	n = hb_get(&hb_task_news, &k);
	if (!n)
		return 0;
	if (n->pending)
		hb_task_merge(n, s);
	else
		__builtin_memcpy(n, s, sizeof(*n));
	n->pending++;
	return 0;
}

/* GOMP_taskloop's entry: its tasks are made inside libgomp, from its fn's release. */
static __always_inline void hb_task_loop(struct hb_thread *t, __u64 fn)
{
	struct hb_key k = { .tgid = t->tgid, .addr = fn };
	struct hb_task_fn f = { .loop = 1 };

	bpf_map_update_elem(&hb_task_fns, &k, &f, BPF_ANY);
}

/* The record of a starting task, copied into its context c and given back when none wait. */
static __always_inline void hb_task_claim(struct hb_task_ctx *c, struct hb_task_new *n)
{
	c->parent = n->parent;
	c->group[0] = n->group;
	c->flags = n->flags;
	c->ndep = n->ndep;
	c->nout = n->nout;
	__builtin_memcpy(c->dep, n->dep, sizeof(c->dep));
}

/*
 * What a task waits for before it starts, joined into t's clock (the
 * task's own, or its thread's): its creator (the record, or for a task
 * of GOMP_taskloop or one whose record is lost, every creation of fn),
 * the finished tasks its depend list names, or every finished task when
 * that is not known.
 */
__noinline int hb_task_edges_in(struct hb_thread *t, const struct hb_task_ctx *c,
			       __u64 fn, int recorded, int loop)
{
	if (!t || !c)
		return 0;
	if (!recorded)
		hb_acquire(t, fn);
	for (int i = 0; i < HB_TASK_DEPS; i++) {
		if (i >= c->ndep)
			break;
		hb_acquire(t, HB_DEP(i < c->nout ? HB_NS_DEP_ALL : HB_NS_DEP_OUT, c, i));
	}
	if ((c->flags & HB_TASK_VAGUE) || (!recorded && !loop) || (c->ndep && hb_task_vague_deps)) {
		hb_count(KCSAND_HB_CTR_TASK_VAGUE);
		hb_acquire(t, HB_OBJ_OMP_TASKS);
	}
	return 0;
}

/*
 * A slot for a starting task, whose clock t holds now: one a task or
 * thread left that it has joined, as for threads; else any free one.  The
 * clocks of the slot's last owner are then taken for the new one's
 * earlier epochs, so its races with the last owner are missed: recall
 * lost, never a report made up.  -1 when all are taken.
 */
static __always_inline int hb_task_slot(struct hb_proc *p, struct hb_thread *t)
{
	int s = hb_take_slot(p, t);

	if (s >= 0 || !p)
		return s;
	for (int i = 0; i < HB_SLOTS; i++) {
		if (hb_slot_try(p, i)) {
			hb_count(KCSAND_HB_CTR_TASK_SLOT_SHARED);
			return i;
		}
	}
	return -1;
}

/*
 * Task c gets the clock it starts from, its record's (or none) joined
 * with what it waits for, and then a slot: the thread's clock and slot
 * are kept in c.  When no slot is free, the thread's come back and the
 * task runs on them (-1).
 */
__noinline int hb_task_switch(struct hb_thread *t, struct hb_task_ctx *c,
			      const struct hb_task_new *n, __u64 fn, int loop)
{
	struct hb_proc *p;
	__u32 tgid;
	int slot;

	if (!t || !c)
		return -1;
	tgid = t->tgid;
	p = bpf_map_lookup_elem(&hb_procs, &tgid);
	c->below = t->slot;
	__builtin_memcpy(c->vc, t->vc, sizeof(c->vc));
	if (n)
		__builtin_memcpy(t->vc, n->vc, sizeof(t->vc));
	else
		__builtin_memset(t->vc, 0, sizeof(t->vc));
	/* Before the slot is chosen: a slot its waits have joined is one it may take over. */
	hb_task_edges_in(t, c, fn, n != NULL, loop);
	slot = hb_task_slot(p, t);
	if (slot < 0 || !p) {
		__builtin_memcpy(t->vc, c->vc, sizeof(t->vc));
		c->own = HB_TASK_ON_THREAD;
		hb_count(KCSAND_HB_CTR_TASK_NO_CLOCK);
		return -1;
	}
	t->slot = slot;
	hb_slot_start(p, t, slot);
	c->own = slot;
	hb_count(KCSAND_HB_CTR_TASKS);
	return slot;
}

/*
 * Tasks share their thread's stack: a task's frames lie where an earlier
 * task's died, and its locals at the addresses of the dead frames' ones,
 * which the tasks that shared them wrote.  Those accesses are not ordered
 * with the new ones, and not a race: the memory changed owner.  When a
 * task starts at sp, every frame of the thread below sp is dead: the
 * thread's marks keep (sp, time), and an access remembered before a mark
 * whose sp is above it is forgotten (hb_task_stack_dead).  Marks are kept
 * as a staircase: a later mark with a higher sp replaces those below it;
 * when they are HB_TASK_MARKS, the two oldest merge into the older's sp at
 * the newer's time, which forgets more, never less.
 */
__noinline int hb_task_mark_stack(struct hb_task_ctx *base, __u32 tgid, __u64 sp)
{
	struct hb_key k = { .tgid = tgid };
	struct hb_vma v = {};
	__u32 n, tid = (__u32)bpf_get_current_pid_tgid();

	if (!base)
		return 0;
	if (!base->stack_hi && !hb_vma_find(bpf_get_current_task_btf(), sp, &v)) {
		base->stack_hi = v.end;
		k.addr = v.end;
		bpf_map_update_elem(&hb_task_stacks, &k, &tid, BPF_ANY);
	}
	n = base->nmarks < HB_TASK_MARKS ? base->nmarks : HB_TASK_MARKS;
	for (int i = 0; i < HB_TASK_MARKS; i++) {
		if (!n || base->mark[(n - 1) & (HB_TASK_MARKS - 1)].sp > sp)
			break;
		n--;
	}
	if (n >= HB_TASK_MARKS) {
		base->mark[0].ns = base->mark[1].ns;
		for (int i = 1; i < HB_TASK_MARKS - 1; i++)
			base->mark[i] = base->mark[i + 1];
		n = HB_TASK_MARKS - 1;
	}
	base->mark[n & (HB_TASK_MARKS - 1)].sp = sp;
	base->mark[n & (HB_TASK_MARKS - 1)].ns = bpf_ktime_get_ns();
	base->nmarks = n + 1;
	return 0;
}

/*
 * The thread whose stack holds addr: the current one when addr lies
 * between its sp (less the red zone) and its stack's end, which needs no
 * lock; else the one whose stack mapping it is, if bpf_find_vma() gets the
 * mmap lock (a thread that grows its stack or maps memory holds it).
 */
static __always_inline struct hb_task_ctx *hb_task_stack_owner(__u32 tgid, __u64 addr, __u64 sp)
{
	struct hb_task_ctx *own = hb_task_level(0);
	struct hb_key k = { .tgid = tgid };
	struct hb_task_level_key lk = {};
	struct hb_vma v = {};
	__u32 *tid;

	if (own && own->stack_hi && addr < own->stack_hi && addr + 128 >= sp)
		return own;
	if (hb_vma_find(bpf_get_current_task_btf(), addr, &v))
		return NULL;
	k.addr = v.end;
	tid = bpf_map_lookup_elem(&hb_task_stacks, &k);
	if (!tid)
		return NULL;
	lk.tid = *tid;
	return bpf_map_lookup_elem(&hb_task_ctxs, &lk);
}

/* Was addr, remembered at ns, in a frame of a thread's stack that died since? */
__noinline int hb_task_stack_dead(__u32 tgid, __u64 addr, __u64 ns, __u64 sp)
{
	struct hb_task_ctx *base = hb_task_stack_owner(tgid, addr, sp);
	__u64 died = 0;

	if (!base)
		return 0;
	for (int i = 0; i < HB_TASK_MARKS; i++) {
		if (i >= base->nmarks || base->mark[i].sp <= addr)
			break;
		died = base->mark[i].ns;
	}
	return ns < died;
}

/*
 * A detached task's event, the first word of its argument: a record an
 * earlier task with the same event (libgomp reuses a finished task's
 * memory) left goes.
 */
static __always_inline void hb_task_event(struct hb_task_ctx *c, __u32 tgid, __u64 arg)
{
	struct hb_key k = { .tgid = tgid };

	if (bpf_probe_read_user(&c->event, sizeof(c->event), (void *)arg))
		c->event = 0;
	k.addr = c->event;
	if (c->event)
		bpf_map_delete_elem(&hb_detached, &k);
}

/*
 * fn's entry, a task's start: a context one level above the one running
 * on the thread.  Returns its id and level (id << 8 | level), which fn's
 * return gets back, 0 when no level was left: the task then runs in the
 * context below, which waits for what the task waits for, and its end
 * releases into every task's objects (hb_task_end).
 */
__noinline __u64 hb_task_begin(struct hb_thread *t, __u64 fn, __u64 arg, __u64 sp)
{
	struct hb_key k = { .addr = fn };
	struct hb_task_ctx *base = hb_task_base(), *c = NULL;
	struct hb_task_level_key lk = { .tid = (__u32)bpf_get_current_pid_tgid() };
	struct hb_task_new *n = NULL;
	struct hb_task_fn *f;
	int loop;

	if (!t)
		return 0;
	k.tgid = t->tgid;
	f = bpf_map_lookup_elem(&hb_task_fns, &k);
	loop = f && f->loop;
	hb_task_mark_stack(base, t->tgid, sp);
	k.addr = f ? hb_task_key(fn, arg + f->skip, f->arg - f->skip) : hb_task_key(fn, arg, 0);
	if (!loop)
		n = bpf_map_lookup_elem(&hb_task_news, &k);
	if (base && base->depth < HB_TASK_LEVELS) {
		lk.level = base->depth + 1;
		c = hb_get(&hb_task_ctxs, &lk);
	}
	if (!c) {
		hb_count(KCSAND_HB_CTR_TASK_NO_CLOCK);
		if (n)
			hb_vc_join(t->vc, n->vc);
		hb_acquire(t, HB_OBJ_OMP_TASKS);
		return 0;
	}
	__builtin_memset(c, 0, offsetof(struct hb_task_ctx, vc));
	c->id = 1ULL << 32 | __sync_fetch_and_add(&hb_task_ids, 1);
	if (f && f->detach)
		hb_task_event(c, t->tgid, arg);
	if (n) {
		hb_task_claim(c, n);
	} else if (!loop) {
		/* Its record was lost, with its depend list: its dependents start after all. */
		c->flags = HB_TASK_VAGUE;
		hb_task_vague_deps = 1;
	}
	/* No slot: it runs on the thread's clock, which waits for what the task waits for. */
	if (hb_task_switch(t, c, n, fn, loop) < 0) {
		if (n)
			hb_vc_join(t->vc, n->vc);
		hb_task_edges_in(t, c, fn, n != NULL, loop);
	}
	if (n && n->pending && !--n->pending)
		bpf_map_delete_elem(&hb_task_news, &k);
	base->depth = lk.level;
	return c->id << 8 | lk.level;
}

/* What waits for task c: its parent's taskwait, its taskgroup, its dependents, barriers. */
__noinline int hb_task_edges_out(struct hb_thread *t, const struct hb_task_ctx *c)
{
	if (!t || !c)
		return 0;
	hb_release(t, c->parent ? HB_NS(HB_NS_CHILDREN, c->parent) : HB_OBJ_OMP_ORPHANS, 0);
	if (c->group[0])
		hb_release(t, HB_NS(HB_NS_GROUP, c->group[0]), 0);
	for (int i = 0; i < HB_TASK_DEPS; i++) {
		if (i >= c->ndep)
			break;
		hb_release(t, HB_DEP(HB_NS_DEP_ALL, c, i), 0);
		if (i < c->nout)
			hb_release(t, HB_DEP(HB_NS_DEP_OUT, c, i), 0);
	}
	hb_release(t, HB_OBJ_OMP_TASKS, 0);
	/*
	 * On the thread's clock, what the thread does next is not the task's:
	 * a new epoch.  A task's own slot keeps the clock released, which its
	 * waiters acquire: then they may give the slot to their next tasks.
	 */
	if (c->own == HB_TASK_ON_THREAD)
		hb_tick(t);
	return 0;
}

/*
 * The task leaves its slot, its last clock kept for the slot's next
 * owner, and the thread takes its own clock back; an undeferred task's
 * creator waited for it, and joins its clock.
 */
__noinline int hb_task_leave(struct hb_thread *t, struct hb_task_ctx *c, int undeferred)
{
	__u32 s, tgid;
	struct hb_proc *p;

	if (!t || !c)
		return 0;
	s = t->slot & (HB_SLOTS - 1);
	tgid = t->tgid;
	p = bpf_map_lookup_elem(&hb_procs, &tgid);
	if (p)
		hb_slot_leave(p, s, t->vc[s]);
	for (int i = 0; i < HB_SLOTS; i++) {
		__u32 v = t->vc[i], below = c->vc[i];

		t->vc[i] = undeferred && v > below ? v : below;
	}
	t->slot = c->below;
	return 0;
}

/*
 * The end of a detached task's fn, which is not its completion: that is
 * its omp_fulfill_event(), from any thread, before or after.  Kept first
 * for a fulfilment still to come (hb_task_fulfill), then what fulfilments
 * came already is acquired: a fulfiller releases into the event before it
 * looks for the record, so one of the two sees the other.  The task's
 * slot clock then carries them to its waiters (hb_task_edges_out).
 */
static __noinline void hb_task_detached_end(struct hb_thread *t, struct hb_task_ctx *c)
{
	struct hb_key k;
	struct hb_task_ctx *kept;

	if (!t || !c)
		return;
	k.tgid = t->tgid;
	k.addr = c->event;
	if (!bpf_map_update_elem(&hb_detached, &k, c, BPF_ANY)) {
		kept = bpf_map_lookup_elem(&hb_detached, &k);
		/* The fulfiller releases its own clock: a new epoch of its thread after. */
		if (kept)
			kept->own = HB_TASK_ON_THREAD;
	}
	hb_acquire(t, HB_NS(HB_NS_DETACH, c->event));
}

/*
 * An undeferred detached task's body returned into its GOMP_task, which
 * waits there until the event is fulfilled (libgomp: a semaphore in its
 * frame): that call's return acquires the event (hb_task_created), kept
 * meanwhile in the call's saved argument, which nothing else reads.
 */
static __always_inline void hb_task_wait_event(struct hb_thread *t, __u64 event)
{
	__u32 d = t->depth;

	if (!d || d > HB_DEPTH)
		return;
	d = (d - 1) & (HB_DEPTH - 1);
	if (t->op[d] == KCSAND_HB_OMP_TASK)
		t->arg1[d] = event;
}

/*
 * omp_fulfill_event(event): what the fulfiller did is before the
 * completion of the event's task, and so before all that waits for it:
 * its parent's taskwait, its taskgroup, its dependents, barriers.
 */
static __always_inline void hb_task_fulfill(struct hb_thread *t, __u64 event)
{
	struct hb_key k = { .tgid = t->tgid, .addr = event };
	struct hb_task_ctx *kept;

	hb_count(KCSAND_HB_CTR_FULFILLED);
	hb_release(t, HB_NS(HB_NS_DETACH, event), 0);
	kept = bpf_map_lookup_elem(&hb_detached, &k);
	if (!kept) {
		hb_tick(t);
		return;
	}
	hb_task_edges_out(t, kept);
	bpf_map_delete_elem(&hb_detached, &k);
}

/*
 * fn's return, the end of the task hb_task_begin() started as id << 8 |
 * level.  Its context is gone if the thread's contexts were unwound since
 * (hb_task_unwind): then it ended as one without a context.
 */
__noinline int hb_task_end(struct hb_thread *t, __u64 started, int undeferred)
{
	__u32 level = started & 0xff;
	struct hb_task_ctx *base = hb_task_base(), *c = level ? hb_task_level(level) : NULL;

	if (!t)
		return 0;
	if (!c || c->id != started >> 8) {
		/* It ran in the context below, which it ends into every object that waits. */
		hb_release(t, HB_OBJ_OMP_ORPHANS, 0);
		hb_release(t, HB_OBJ_OMP_TASKS, 1);
		hb_task_vague_deps = 1;
		return 0;
	}
	if (c->event) {
		hb_task_detached_end(t, c);
		if (undeferred)
			hb_task_wait_event(t, c->event);
	}
	hb_task_edges_out(t, c);
	if (c->own != HB_TASK_ON_THREAD)
		hb_task_leave(t, c, undeferred);
	if (base && base->depth >= level)
		base->depth = level - 1;
	return 0;
}

/* Is the task function fn returning into GOMP_task, its creation: an if(0) or included task? */
static __always_inline int hb_task_undeferred(const struct hb_thread *t, __u64 fn)
{
	__u32 d = t->depth;

	if (!d || d > HB_DEPTH)
		return 0;
	d = (d - 1) & (HB_DEPTH - 1);
	return t->op[d] == KCSAND_HB_OMP_TASK && t->arg0[d] == fn;
}

/*
 * GOMP_teams4's return, at sp: where the stack of a host team starts.
 * The outlined function that calls it runs the teams one after the other
 * in one frame, and its locals there (a team's own variables, the data
 * block a team hands its `parallel`) are each team's own: on a device
 * every team has its copy.  So the whole frame dies when a team starts,
 * from its entry's sp (hb_task_fn_entry), when that call is the one below.
 */
#define HB_TEAMS_FRAME_MAX	(64ULL << 20)	/* a frame larger is not a frame: sp only */

static __always_inline __u64 hb_teams_frame(const struct hb_thread *t, __u64 sp)
{
	__u32 d = t->depth;

	if (!d || d > HB_DEPTH)
		return sp;
	d = (d - 1) & (HB_DEPTH - 1);
	if (t->op[d] != KCSAND_HB_OMP_FN || t->arg1[d] <= sp || t->arg1[d] - sp > HB_TEAMS_FRAME_MAX)
		return sp;
	return t->arg1[d];
}

/* GOMP_taskwait's return: the current task's children are done, and their clocks known. */
__noinline int hb_task_wait(struct hb_thread *t)
{
	struct hb_task_ctx *c = hb_task_top();

	if (!t)
		return 0;
	if (c)
		hb_acquire(t, HB_NS(HB_NS_CHILDREN, c->id));
	else
		hb_acquire(t, HB_OBJ_OMP_TASKS);
	hb_acquire(t, HB_OBJ_OMP_ORPHANS);
	return 0;
}

/* GOMP_taskgroup_start's entry: the tasks the current task creates from now on are the group's. */
__noinline int hb_task_group_start(void)
{
	struct hb_task_ctx *c = hb_task_top();
	__u32 n;

	if (!c)
		return 0;
	n = ++c->ngroup;
	if (n <= HB_TASK_GROUPS)
		c->group[n] = 1ULL << 33 | __sync_fetch_and_add(&hb_task_ids, 1);
	return 0;
}

/* GOMP_taskgroup_end's return: the group's tasks and their descendants are done. */
__noinline int hb_task_group_end(struct hb_thread *t)
{
	struct hb_task_ctx *c = hb_task_top();

	if (!t)
		return 0;
	if (!c || !c->ngroup) {
		/* Its start went unseen (a pause of the sync probes). */
		hb_acquire(t, HB_OBJ_OMP_TASKS);
		return 0;
	}
	hb_acquire(t, HB_NS(HB_NS_GROUP, hb_task_group(c)));
	hb_acquire(t, HB_OBJ_OMP_ORPHANS);
	c->ngroup--;
	return 0;
}

/*
 * Task level l of thread t unwound: its slot given back to p and, for the
 * lowest with a clock of its own (restored still 0), the thread's clock
 * taken back from it.  Returns restored, or 1 once it was.  A global
 * function: inlined, the verifier walked it again at every level, twice.
 */
__noinline int hb_task_unwind_level(struct hb_thread *t, struct hb_proc *p, __u32 l, int restored)
{
	struct hb_task_ctx *c = hb_task_level(l);
	__u32 s;

	if (!t || !p || !c)
		return restored;
	if (c->own == HB_TASK_ON_THREAD) {
		c->id = 0;
		return restored;
	}
	s = c->own & (HB_SLOTS - 1);
	hb_slot_leave(p, s, hb_slot_clock(p, s));
	c->id = 0;	/* its return, if it comes, finds it gone */
	/* The lowest task with a clock of its own kept the thread's. */
	if (!restored) {
		t->slot = c->below;
		__builtin_memcpy(t->vc, c->vc, sizeof(t->vc));
	}
	return 1;
}

/*
 * The thread's first event after a pause of the sync probes, or a return
 * it did not remember: the returns of the tasks it was running may have
 * gone unseen.  It takes its own clock back (its caller then acquires
 * every epoch), and their slots are given back.
 */
__noinline int hb_task_unwind(struct hb_thread *t)
{
	struct hb_task_ctx *base = hb_task_base();
	struct hb_proc *p;
	int restored = 0;
	__u32 tgid;

	if (!t || !base || !base->depth)
		return 0;
	tgid = t->tgid;
	p = bpf_map_lookup_elem(&hb_procs, &tgid);
	if (!p)
		return 0;		/* a thread with a clock has its process's */
	for (__u32 l = 1; l <= HB_TASK_LEVELS; l++) {
		if (l > base->depth)
			break;
		restored = hb_task_unwind_level(t, p, l, restored);
	}
	base->depth = 0;
	return 0;
}

/*
 * GOMP_sections_start's or GOMP_sections_next's return, at sp: the thread
 * ends the section it ran, if any, and starts section nr, or with 0 has
 * none left.  The sections of a construct are as unordered as sibling
 * tasks, whichever thread runs them: on one thread's clock, the second
 * of two sections it runs would look ordered after the first, and a race
 * between them be found only when two threads share them out.  So each
 * section runs as a task would, from the clock its thread had when the
 * construct handed it out, in a slot of its own.  Its end releases into
 * the thread's sections object, which the thread acquires when it has no
 * section left: what it does after the construct comes after its
 * sections, and its barrier passes them on.  Its frames die when the
 * next one starts (a stack mark, as for a task).
 *
 * GOMP_teams4's return is the same with flag HB_TASK_TEAM: a `teams`
 * construct run on the host (a target's fallback) runs its teams one
 * after the other on the thread that meets it, each at a true return,
 * and the construct ends at the false one.  A host `teams` outside any
 * target (OpenMP 5) is GOMP_teams_reg(fn, ...), which calls fn once per
 * team: each entry of fn starts a team, and GOMP_teams_reg's return is
 * the construct's end.  The teams of a league are
 * concurrent (only their ends are ordered before what follows), so each
 * runs as a section does, with an object of its own kind: a `sections`
 * inside a team must not end the team, nor its end acquire the teams.
 */
static __noinline void hb_task_section(struct hb_thread *t, __u32 nr, __u64 sp, __u32 flag)
{
	struct hb_task_level_key lk = { .tid = (__u32)bpf_get_current_pid_tgid() };
	struct hb_task_ctx *base = hb_task_base(), *top = hb_task_top(), *c;
	__u64 mine = HB_NS(flag == HB_TASK_TEAM ? HB_NS_TEAMS : HB_NS_SECTIONS, lk.tid);
	struct hb_task_new *n;
	__u32 zero = 0;

	if (!t || !base || !top)
		return;
	if (top != base && (top->flags & flag)) {
		hb_release(t, mine, 0);
		hb_task_end(t, top->id << 8 | (base->depth & 0xff), 0);
		top = hb_task_top();
	}
	if (!nr) {
		hb_acquire(t, mine);
		return;
	}
	n = bpf_map_lookup_elem(&hb_task_scratch, &zero);
	if (!top || !n || base->depth >= HB_TASK_LEVELS)
		return;		/* on the thread's clock: ordered after its last section */
	lk.level = base->depth + 1;
	c = hb_get(&hb_task_ctxs, &lk);
	if (!c)
		return;
	hb_task_mark_stack(base, t->tgid, sp);
	__builtin_memset(c, 0, offsetof(struct hb_task_ctx, vc));
	c->id = 1ULL << 32 | __sync_fetch_and_add(&hb_task_ids, 1);
	c->parent = top->id;
	c->group[0] = hb_task_group(top);
	c->flags = flag;
	__builtin_memset(n, 0, offsetof(struct hb_task_new, vc));
	__builtin_memcpy(n->vc, t->vc, sizeof(n->vc));
	if (hb_task_switch(t, c, n, 0, 1) >= 0)
		hb_count(flag == HB_TASK_TEAM ? KCSAND_HB_CTR_TEAMS : KCSAND_HB_CTR_SECTIONS);
	base->depth = lk.level;
}

/*
 * The entries of GOMP_task, GOMP_taskloop (fn is a task function: a
 * creation), taskgroups, GOMP_teams_reg (fn runs each host team) and
 * omp_fulfill_event (a detached task's completion).
 */
static __always_inline void hb_task_entry(struct pt_regs *ctx, struct hb_thread *t, __u32 op)
{
	__u64 fn = PT_REGS_PARM1(ctx), size = PT_REGS_PARM4(ctx);
	struct hb_key k = { .tgid = t->tgid, .addr = fn };
	__u32 kind = op == KCSAND_HB_OMP_TEAMS_REG ? HB_FN_TEAM : HB_FN_TASK;

	if (op == KCSAND_HB_OMP_TASKGROUP_START) {
		hb_task_group_start();
		return;
	}
	if (op == KCSAND_HB_OMP_FULFILL) {
		hb_task_fulfill(t, PT_REGS_PARM1(ctx));
		return;
	}
	bpf_map_update_elem(&hb_fns, &k, &kind, BPF_ANY);
	if (op == KCSAND_HB_OMP_TEAMS_REG)
		return;
	/*
	 * The call's own epoch, which its return ends (hb_task_created):
	 * libgomp copies the task's data (memmove, or the cpyfn) after this
	 * entry, and the task may start before the call returns, on another
	 * thread or inside it.  Released with the creation, that copy is
	 * before the task, as it is; a watch that catches it (a debug
	 * register sees libgomp's writes too) then finds it ordered.
	 */
	if (!t->once_depth)
		hb_tick(t);
	/* A cpyfn makes a copy of its own: only fn is in the key. */
	if (op == KCSAND_HB_OMP_TASK)
		hb_task_create(t, fn, PT_REGS_PARM2(ctx),
			       PT_REGS_PARM3(ctx) ? 0 : size < HB_TASK_ARG ? size : HB_TASK_ARG,
			       PT_REGS_SP(ctx));
	else
		hb_task_loop(t, fn);
	/* Also into fn's object: the start of a task whose creation has no record. */
	hb_release(t, fn, 0);
}

/*
 * GOMP_task's or GOMP_taskloop's return: what the creator does after it
 * is not its tasks' (a new epoch); inside the call, only libgomp's copies
 * of their data and included tasks, on their own clocks, ran.  event: an
 * undeferred detached task's, whose fulfilment the call waited for
 * (hb_task_wait_event), or 0.
 */
static __always_inline void hb_task_created(struct hb_thread *t, __u64 event)
{
	if (event)
		hb_acquire(t, HB_NS(HB_NS_DETACH, event));
	if (!t->once_depth)
		hb_tick(t);
}

/*
 * An outlined function fn's entry: a task's start (its level), or a team
 * member's (its entry sp: the slot of its return address, which
 * hb_teams_frame() finds).
 */
static __always_inline __u64 hb_task_fn_entry(struct pt_regs *ctx, struct hb_thread *t, __u64 fn)
{
	struct hb_key k = { .tgid = t->tgid, .addr = fn };
	__u32 *kind = bpf_map_lookup_elem(&hb_fns, &k);

	if (kind && *kind == HB_FN_TASK)
		return hb_task_begin(t, fn, PT_REGS_PARM1(ctx), PT_REGS_SP(ctx));
	if (kind && *kind == HB_FN_TEAM) {
		/* The next host team of GOMP_teams_reg: the one before ends (hb_task_section). */
		hb_task_section(t, 1, PT_REGS_SP(ctx), HB_TASK_TEAM);
		return PT_REGS_SP(ctx);
	}
	hb_acquire(t, fn);
	if (kind && *kind == HB_FN_PARALLEL) {
		/* A team begins in this thread: its barriers count from 0 (hb_omp_parity). */
		t->bar_count = 0;
		t->bar_ok = 1;
		t->bar_gen = t->gen;
		t->bar_pgen = t->pgen;
	}
	return PT_REGS_SP(ctx);
}

/* A thread's end: its contexts go. */
static __always_inline void hb_task_exit(__u32 tid)
{
	for (__u32 l = 0; l <= HB_TASK_LEVELS; l++) {
		struct hb_task_level_key k = { .tid = tid, .level = l };

		bpf_map_delete_elem(&hb_task_ctxs, &k);
	}
}

#endif

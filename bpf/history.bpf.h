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
 * Each sampled access, plain or marked, is checked against a shadow entry
 * for each 8-byte granule it touches, which remembers up to HB_CELLS
 * earlier accesses as epochs (slot, clock) with their site, time and
 * stack.  A remembered access of another thread that conflicts (a write on
 * either side, not both marked) and whose epoch the current thread has not
 * acquired is a race, reported with both stacks.
 *
 * Included by kcsand.bpf.c after the traced-process filter; uses the site
 * table, the ring buffer and fill_access() of engine.bpf.h.  This file
 * holds the detector's limits, state and maps; the clocks are in
 * history_clock.bpf.h, OpenMP tasks' own clocks in tasks.bpf.h, the shadow
 * and its check in history_shadow.bpf.h, the sync probes in
 * history_sync.bpf.h.
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
/*
 * After its process was held, a thread's every event acquires all until it
 * has run this long on a CPU (hb_new_gen), or HB_SETTLE_WALL_NS has passed.
 */
#define HB_SETTLE_NS		(100 * 1000000ULL)
#define HB_SETTLE_WALL_NS	(5 * 1000000000ULL)
/* A second report of the same pair of sites is not sent within this (the daemon dedups). */
#define HB_REPORT_GAP_NS	(100 * 1000000ULL)

/* Sync objects of libgomp's own, keyed below any address a program can map. */
#define HB_OBJ_OMP_END		1	/* outlined functions that returned */
#define HB_OBJ_OMP_TASKS	2	/* tasks that finished */
#define HB_OBJ_OMP_BARRIER	3	/* a team's even barriers (hb_omp_parity) */
#define HB_OBJ_OMP_CRITICAL	4
#define HB_OBJ_OMP_ATOMIC	5
#define HB_OBJ_OMP_ORDERED	6
#define HB_OBJ_OMP_BARRIER_ODD	8	/* and its odd ones (7: tasks.bpf.h's orphans) */
/* A descriptor's number: bit 56 set, which no user or kernel address has (non-canonical). */
#define HB_OBJ_FD_NUMBER(fd)	((1ULL << 56) | (__u32)(fd))
#define HB_OBJ_SIGNAL(sig)	((2ULL << 56) | (__u32)(sig))	/* sent, to be delivered */

/* What an outlined function was spawned as (hb_fns). */
#define HB_FN_PARALLEL	1
#define HB_FN_TASK	2
#define HB_FN_TEAM	3	/* GOMP_teams_reg's fn: each call is a host team */

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
/* Processes held so far: the daemon probes what they map when it moves (history__poll). */
__u64 hb_held;
/* The daemon's own process (its trap calibration hits a probe): never held, never probed. */
__u32 hb_daemon_tgid;
/*
 * Set by the daemon once it noted a probe after a locked release
 * (hb_release_probes): only then can a release be in flight, and only then
 * are acquires pushed out of a thread's last ones kept (hb_acq_spill).  A
 * program that takes many mutexes and has no such probe (P2) pays nothing.
 */
__u32 hb_late_possible;

/*
 * Processes the daemon probed the sync functions of: only they have a
 * history.  The value: KCSAND_HB_TGID_HELD while the daemon probes what
 * the process mapped, and the process's generation (include/kcsand.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} hb_tgids SEC(".maps");

static __always_inline int hb_traced(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, *v;

	if (!hb_enabled)
		return 0;
	v = bpf_map_lookup_elem(&hb_tgids, &tgid);
	return v && !(*v & KCSAND_HB_TGID_HELD);
}

/*
 * Hold process tgid: something it maps may hold sync functions that are
 * not probed for it (a forked child's probes are the parent's; an exec's
 * new image; a dlopen'd library), so nothing is remembered for it until
 * the daemon probed them and let it go (history__poll).  exists: only a
 * process with a history already; else a new one (BPF_NOEXIST), in
 * generation gen: 0 for a forked child, whose one thread is in no call
 * (let go in 1, no settling), 1 for a process found running.
 */
/* When each process was held (hb_hold), for the daemon: how long its holds last (-v). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} hb_held_ns SEC(".maps");

static __always_inline void hb_hold(__u32 tgid, int exists, __u32 gen)
{
	__u32 *v = bpf_map_lookup_elem(&hb_tgids, &tgid);
	__u32 held = KCSAND_HB_TGID_HELD | gen * KCSAND_HB_TGID_GEN;
	__u64 now;

	if (tgid == hb_daemon_tgid)
		return;
	if (v && exists)
		__sync_fetch_and_or(v, KCSAND_HB_TGID_HELD);
	else if (v || exists || bpf_map_update_elem(&hb_tgids, &tgid, &held, BPF_NOEXIST))
		return;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&hb_held_ns, &tgid, &now, BPF_ANY);
	__sync_fetch_and_add(&hb_held, 1);
	/* The daemon's poll may be a second away: the process's history waits for it. */
	struct kcsand_hb_held rec = { .type = KCSAND_REC_HB_HELD, .tgid = tgid };

	bpf_ringbuf_output(&events, &rec, sizeof(rec), BPF_RB_FORCE_WAKEUP);
}

/*
 * Under trace_all (the service's targets without a pid) a process is found
 * at its first probe hit, its site armed or not (a target's later runs may
 * find the sampler's backoff), and held until its sync is probed.
 */
static __always_inline void history_find(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (hb_enabled && PARAM(trace_all) && !bpf_map_lookup_elem(&hb_tgids, &tgid))
		hb_hold(tgid, 0, 1);
}

/*
 * A release in flight (hb_inflight()).  A locked RMW with no probe ahead
 * of it is released by the probe after it, when other CPUs can already
 * see its value: a thread that read that value and acquired in between
 * found no release.  The releaser keeps its last such releases, each with
 * the time of its event before the probe (the RMW ran between the two),
 * and every thread keeps its last acquires by address, so that a race
 * found later is first checked against them.
 */
#define HB_LATE		2
#define HB_ACQS		4

struct hb_late {
	__u64 addr;		/* the object released */
	__u64 from_ns;		/* the thread's event before it: the RMW ran after */
	__u64 ns;		/* the release published */
	__u64 probe_ip;		/* the probe after the RMW */
	__u32 clock;		/* the epoch released */
	__u32 site;
};

struct hb_acq {
	__u64 addr;
	__u64 ns;		/* its latest acquire */
};

/*
 * An acquire pushed out of its thread's last HB_ACQS (hb_acq_note()), by
 * the thread's process and slot and the object: a release in flight is
 * matched with the acquirer's acquire of its object in its window however
 * many other objects the acquirer took since (a consumer that reads a few
 * status words between its acquire of a count and its read of the data).
 * A slot's next thread may find its last one's entries: more order only.
 * LRU: an entry is lost only after 65,536 others were pushed out since.
 */
struct hb_acq_key {
	__u32 tgid;
	__u32 slot;
	__u64 addr;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, KCSAND_HB_ACQ_SPILL);
	__type(key, struct hb_acq_key);
	__type(value, __u64);
} hb_acq_spill SEC(".maps");

/*
 * Every probe after a locked release, filled by the daemon when it attaches
 * the site (daemon/engine/release_probes.c): a thread stopped at one is
 * known in flight from its registers before it has ever released there.
 * The value is the site.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KCSAND_HB_RELEASE_PROBES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct kcsand_probe_key);
	__type(value, __u32);
} hb_release_probes SEC(".maps");

/* The file of each object (struct kcsand_site's obj) with probes in hb_release_probes. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KCSAND_HB_OBJS);
	__type(key, __u32);
	__type(value, __u64);
} hb_obj_ino SEC(".maps");

struct hb_thread {
	__u32 slot;
	__u32 tgid;
	/* A marked load's address: acquired at the thread's next event, after the load ran. */
	__u64 pending_acq;
	/*
	 * A spin-wait load's around calls (struct kcsand_site::loop_ret): its
	 * rsp, where its loop's calls put their return address and which
	 * ones they are, and its own return address and where it is.  While
	 * the thread is inside one of those calls, pending_acq waits.
	 */
	__u64 pending_sp;
	__u64 pending_ret[2];
	__u64 pending_ra;
	__u64 pending_ra_at;
	__u32 last_child;	/* the thread it created last (fork tracepoint) */
	__u32 once_depth;	/* inside pthread_once(): the epoch is kept until it returns */
	__u32 gen;		/* hb_gen at its last sync event: depth is stale if older */
	__u32 pgen;		/* its process's generation then (hb_tgids): the same */
	/* After a hold, every event acquires all until these (CPU time, wall time). */
	__u64 settle_cpu_ns;
	__u64 settle_ns;
	/*
	 * OpenMP barriers passed since its team's outlined function began
	 * (hb_omp_parity), counted in generation bar_gen, bar_pgen; bar_ok
	 * clear: not counted from a team's start.
	 */
	__u32 bar_count;
	__u32 bar_ok;
	__u32 bar_gen;
	__u32 bar_pgen;
	/* Its events' times, and what hb_inflight() reads (above). */
	__u64 event_ns;
	__u64 prev_event_ns;
	struct hb_late late[HB_LATE];
	struct hb_acq acq[HB_ACQS];
	__u64 ahead_obj;	/* what a probe ahead published, until its RMW's release */
	__u64 learn_seen;	/* atomic_learn_armed at its last event (hb_learn_catch_up()) */
	__u64 uregs;		/* its user registers (task_pt_regs()), from its first event */
	/* The probe after a locked release that released last, in event stop_ns (hb_inflight_now). */
	__u64 stop_ip;
	__u64 stop_ns;
	__u32 late_next;
	/* Its reads kept (HB_TYPE_KEEP) in its epoch keep_clock, at most HB_KEEP_READS. */
	__u32 keep_n;
	__u32 keep_clock;
	__u32 __pad4;
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
	/*
	 * A live slot's clock: the latest epoch any of its threads took
	 * (hb_tick), for hb_acquire_all() and for a sharer's next epoch.
	 */
	__u32 cur_clock[HB_SLOTS];
	/* Live threads or tasks in each slot: more than one once all were taken (hb_share_slot). */
	__s32 sharers[HB_SLOTS];
	__u32 share_next;		/* where hb_share_slot() starts looking */
	__u32 __pad3;
	/*
	 * Releases when hb_syncs is full, all into one object, which every
	 * acquire of an object not in hb_syncs then acquires: more order
	 * than the program has, never less.
	 */
	__u32 overflow[HB_SLOTS];
	__u32 overflowed;
	__u32 __pad2;
	__u64 forgot_ns;		/* every cell remembered before this is forgotten */
	__u32 next_range;		/* the range to push out when the least is taken, modulo HB_RANGES */
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
	__u8 type;		/* KCSAND_ACCESS_* and HB_TYPE_* */
	__u8 size;
	__s8 off;		/* its address - the granule's: -31 to 7 (a wide access) */
	__u8 __pad[4];
};

/*
 * What a cell's type says besides KCSAND_ACCESS_*, for the rule that a
 * plain access is not paired with an atomic one learned at run time
 * (bpf/atomics.bpf.h) at its very address: made before any lock or xchg
 * taught that address, it is taken to be what a later one would be, an
 * atomic access (hb_conflict).  Never sent: hb_report() masks them.
 */
#define HB_TYPE_LEARNABLE	(1u << 6)	/* a plain load or store the run-time rule may mark */
#define HB_TYPE_INFERRED	(1u << 7)	/* atomic by the run-time rule: a lock, xchg, learned */
/*
 * A trapped write checked before the daemon decoded its instruction
 * (hb_watch_fill): its ip is the trap's, after the instruction.  A later
 * report whose earlier side it is says so (KCSAND_ACC_HWBP), and the daemon
 * decodes it then: its site may be marked (an _Atomic the debug info typed).
 */
#define HB_TYPE_HW_RAW		(1u << 3)
/*
 * A read kept in its entry against other granules while its thread has not
 * released since (bpf/history_shadow.bpf.h, hb_kept()): one of the thread's
 * first reads of its epoch of a granule the shadow had nothing of.
 */
#define HB_TYPE_KEEP		(1u << 4)
#define HB_TYPE_ACCESS		(KCSAND_ACCESS_WRITE | KCSAND_ACCESS_COMPOUND | KCSAND_ACCESS_ATOMIC)

struct hb_shadow {
	__u32 seq;		/* odd: a thread is checking or updating the entry */
	__u32 tgid;
	__u64 granule;		/* address >> 3 */
	__u32 gen;		/* hb_gen when its cells were remembered */
	__u32 __pad;
	struct hb_cell cell[HB_CELLS];
};

/*
 * A remembered stack, keyed by its frames, its sp and its process: the
 * daemon keeps a copy's frames under (pid, key), and forked children have
 * their parent's layout, so two of them reach the same code at the same
 * sp; keyed without the process, the second one found the first one's
 * entry, copied, and its reports printed their frame-pointer walk.
 */
struct hb_stack {
	__s32 nr;
	__u32 copied;		/* its struct kcsand_ustack went out, under the stack's key */
	__u32 tgid;		/* its process: the entry goes when the process ends */
	__u32 __pad;
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
	__u64 granule;		/* the one being checked: an access up to 32 bytes spans up to 5 */
	__u32 site_idx;
	__u32 size;
	__u32 type;		/* KCSAND_ACCESS_* and HB_TYPE_* */
	__u32 flags;		/* KCSAND_ACC_*: a watch's trap, after the access */
};

/* Where an access goes: its own cell, else a free one, else one it is ordered after. */
/*
 * The cells an access may take, best first: its own that it stands for, a
 * free one, another thread's ordered before it, one more of its own (mine),
 * another thread's read (other_read); else any.
 */
struct hb_scan {
	int own, free, old, race, mine, other_read;
	int kept;		/* the entry kept another granule's read: not remembered here */
};

/* Per CPU: what does not fit on the BPF stack next to the engine's frame. */
struct hb_scratch {
	struct hb_stack stk;
	__u64 copy_key;		/* a stack remembered without its copy yet: take it (or 0) */
	/* This access's stack key, walked once for all its granules: ~0 until then. */
	__u64 stack_key;
	struct hb_cell found;
	__u64 found_granule;	/* the granule found's cell is of */
	__u8 mask;		/* the bytes of acc.granule the access touches */
	__u32 victim;		/* the cell of e it takes: hb_cell_choose_g() */
	struct hb_scan scan;	/* hb_scan_g()'s answer, for hb_check() */
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

/*
 * Which 64-byte lines of user memory hold a sync object of hb_syncs, so
 * that memory freed or unmapped forgets its objects (hb_forget_syncs)
 * without a look-up per byte: a word per 4 KiB page, a bit per line,
 * direct-mapped by (tgid, page).  Two pages that share a word share its
 * bits: a line is then looked at in vain, or its bit is cleared while the
 * other page's object stays, which keeps that object's clock (more order,
 * as before objects were forgotten), never less.
 */
#define HB_SYNC_PAGE_BITS	14
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << HB_SYNC_PAGE_BITS);
	__type(key, __u32);
	__type(value, __u64);
} hb_sync_lines SEC(".maps");

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

/*
 * Which granules of a 512-byte region the shadow may hold, so that memory
 * freed is forgotten at a look-up per region, not per granule: the
 * forgetting of a heap block was 40 ns a granule, a cache miss in the
 * shadow each.  Direct-mapped by (tgid, region), a slot names the one
 * region its bits are of (tag); a slot two regions met in is SHARED for
 * the rest of the run, and its regions are forgotten granule by granule,
 * as before.  A tag of 0: no granule of any region of the slot was ever
 * remembered.  hb_region_note_g(), hb_clear_region_g().
 */
#define HB_REGION_BITS		16
#define HB_REGION_SHARED	(~0ULL)

struct hb_region {
	__u64 tag;		/* region << 22 | tgid, 0, or HB_REGION_SHARED */
	__u64 bits;		/* its granules that may have cells */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << HB_REGION_BITS);
	__type(key, __u32);
	__type(value, struct hb_region);
} hb_regions SEC(".maps");

/* Stacks of remembered accesses, keyed by a hash of their frames, sp and process. */
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

static __always_inline void hb_add(enum kcsand_hb_counter c, __u64 n)
{
	__sync_fetch_and_add(&hb_counters[c], n);
}

static __always_inline void hb_count(enum kcsand_hb_counter c)
{
	hb_add(c, 1);
}

/* The BPF time of the detector's work, so that -v can show it apart from the traps. */
static __always_inline void hb_time(enum kcsand_hb_counter c, __u64 t0)
{
	hb_add(c, bpf_ktime_get_ns() - t0);
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

/* In this order: each uses what the ones before it define. */
/* bpf_find_vma()'s callback: the mapping an address is in (thread stacks, tasks.bpf.h). */
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

/* Into *v, the mapping of task's address space that addr is in: 0, or -errno if none. */
static __always_inline long hb_vma_find(struct task_struct *task, __u64 addr, struct hb_vma *v)
{
	return bpf_find_vma(task, addr, hb_vma_of, v, 0);
}

#include "history_clock.bpf.h"
#include "tasks.bpf.h"
#include "history_shadow.bpf.h"
#include "history_sync.bpf.h"
#include "history_watch.bpf.h"

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Atomics learned at run time.  Without debug info the only atomics the
 * decoder sees are lock-prefixed and xchg instructions and stores a full
 * fence follows (KCSAND_SITE_TEACHES).  The other accesses of the same
 * atomic object are plain movs: __sync_lock_release()'s store, a seq_cst
 * or acquire load, gcc's `omp atomic read`.  So the address a teaching
 * site touches is remembered, and a plain access to exactly that address
 * is an atomic access: it never races (KCSAN's rule for marked accesses),
 * and the history takes it as an acquire (load) or release (store).
 *
 * The order problem: a plain access that comes before the first teaching
 * access to its address is still plain.  An atomic object is almost always
 * first written by its initialisation, which a thread's creation orders,
 * and a load before any RMW or fenced store reads that initial value, so
 * it acquires nothing that was released.
 *
 * The map is an LRU hash: an atomic object that is used stays in it, and
 * one untouched while more than KCSAND_ATOMICS_MAX others were taught is
 * forgotten; then its next teaching access learns it again.  Keyed by the
 * exact address, not the granule, so that a plain field next to a lock
 * word in the same 8 bytes stays plain.
 *
 * Keyed by the process too, except in a shared mapping (MAP_SHARED: the
 * same object at the same address in the processes a fork made).  There
 * another process's teaching counts: stress-ng's atomic stressor is four
 * processes over one shared page, and a process's relaxed store and loads
 * at the top of its first round come before its own first lock-prefixed
 * access, while the other processes' change the word under its watchpoint
 * ("a race of unknown origin").  The entry of tgid 0 says "taught in a
 * shared mapping"; a process that hits it checks that the address is in a
 * shared mapping of its own (bpf_find_vma) and learns it for itself.
 */
#ifndef KCSAND_ATOMICS_BPF_H
#define KCSAND_ATOMICS_BPF_H

/* Counters for -v: addresses taught (new entries), plain accesses taken as atomic. */
__u64 atomics_taught;
__u64 atomics_plain_hits;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, KCSAND_ATOMICS_MAX);
	__type(key, struct kcsand_atomic_key);
	__type(value, __u32);
} learned_atomics SEC(".maps");

/* Entry values: taught in a private mapping, or in a shared one (a tgid 0 entry exists too). */
#define ATOMIC_PRIVATE	1
#define ATOMIC_SHARED	2

/* bpf_find_vma()'s callback: is the mapping shared (VM_SHARED, mm.h's 0x8)? */
static long atomic_vma_shared(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	*(__u32 *)data = vma->vm_flags & 0x8 ? ATOMIC_SHARED : ATOMIC_PRIVATE;
	return 0;
}

/* ATOMIC_SHARED when addr is in a shared mapping of the current process, else ATOMIC_PRIVATE. */
static __always_inline __u32 atomic_mapping(__u64 addr)
{
	__u32 kind = ATOMIC_PRIVATE;

	if (bpf_find_vma(bpf_get_current_task_btf(), addr, atomic_vma_shared, &kind, 0))
		return ATOMIC_PRIVATE;
	return kind;
}

/* A teaching access at k's address: learn it for the process, and for all in a shared mapping. */
static __always_inline void atomic_teach(struct kcsand_atomic_key *k)
{
	__u32 *known = bpf_map_lookup_elem(&learned_atomics, k);
	__u32 kind;

	if (known) {
		kind = *known;
	} else {
		kind = atomic_mapping(k->addr);
		if (!bpf_map_update_elem(&learned_atomics, k, &kind, BPF_NOEXIST))
			__sync_fetch_and_add(&atomics_taught, 1);
	}
	if (kind != ATOMIC_SHARED)
		return;
	/* Kept taught while this process teaches it: the LRU may have dropped it alone. */
	k->tgid = 0;
	if (!bpf_map_lookup_elem(&learned_atomics, k))
		bpf_map_update_elem(&learned_atomics, k, &kind, BPF_NOEXIST);
}

/*
 * Whether the process knows k's address for an atomic's, from its own
 * teaching or, in a shared mapping, from another process's (then it
 * learns it too, so that the mapping is looked up once).
 */
static __always_inline int atomic_known(struct kcsand_atomic_key *k)
{
	__u32 tgid = k->tgid, kind = ATOMIC_SHARED;

	if (bpf_map_lookup_elem(&learned_atomics, k))
		return 1;
	k->tgid = 0;
	if (!bpf_map_lookup_elem(&learned_atomics, k) || atomic_mapping(k->addr) != ATOMIC_SHARED)
		return 0;
	k->tgid = tgid;
	bpf_map_update_elem(&learned_atomics, k, &kind, BPF_ANY);
	return 1;
}

/*
 * The sites whose plain access was taken as atomic.  Each is a sync site
 * from then on (an acquire or a release), and the engine keeps it armed
 * with the marked ones (daemon/engine/arm.c): sampled one hit at a time, a
 * disarmed turn would lose the acquire that orders an armed access, and
 * make a false report.  A site the full map cannot take stays sampled,
 * counted in atomics_sites_lost.
 */
__u64 atomics_sites_lost;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KCSAND_ATOMIC_SITES_MAX);
	__type(key, __u32);
	__type(value, __u8);
} learned_sites SEC(".maps");

/*
 * A site learned is armed by the engine at its next poll, not at once, and
 * until then its hits may go unprobed: a thread polling a flag through a
 * site the sampler had backed off before the flag was ever taught (a
 * worker that waits alone for its first job) takes no acquire, and what
 * the flag published is then reported against it.  So each site learned
 * puts its object in this ring, numbered; the engine says which number it
 * has armed up to (atomic_learn_armed, daemon/engine/arm.c); and a thread's
 * every event acquires the objects of the sites learned and not yet armed
 * when its last event ran (hb_learn_catch_up(), bpf/history_clock.bpf.h).
 * More order for a moment, never less.
 */
struct kcsand_learn_slot atomic_learn_ring[KCSAND_LEARN_RING];
__u64 atomic_learn_seq;		/* sites learned: the ring's next number */
__u64 atomic_learn_armed;	/* by the engine: those numbered below it are armed */

static __always_inline void atomic_learn_publish(__u64 obj)
{
	__u64 n = __sync_fetch_and_add(&atomic_learn_seq, 1);
	struct kcsand_learn_slot *sl = &atomic_learn_ring[n & (KCSAND_LEARN_RING - 1)];

	/* A reader that finds seq not yet n + 1 acquires all (hb_learn_catch_up()). */
	*(volatile __u64 *)&sl->seq = 0;
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&sl->obj = obj;
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&sl->seq = n + 1;
}

/*
 * Site site_idx takes obj's atomic: kept armed from now on.  unprobed: its
 * hits may go unprobed until the engine arms it, and they may load the
 * atomic, so obj goes in the ring.  Only then: acquiring obj at every
 * thread's events orders away any race with what obj's releases follow (a
 * plain `stop` flag's setter, racy_stop_flag_work, when the worker's own
 * first poll was learned).
 */
static __always_inline void atomic_site_learned(__u32 site_idx, __u64 obj, int unprobed)
{
	__u8 one = 1;

	if (bpf_map_lookup_elem(&learned_sites, &site_idx))
		return;
	if (!bpf_map_update_elem(&learned_sites, &site_idx, &one, BPF_NOEXIST)) {
		if (unprobed)
			atomic_learn_publish(obj);
	}
	else if (!bpf_map_lookup_elem(&learned_sites, &site_idx))
		__sync_fetch_and_add(&atomics_sites_lost, 1);
}

/*
 * A user access at addr by site: 1 for a plain load or store whose address
 * a teaching site touched, else 0.  A teaching site teaches its address and
 * gives 0: it is marked already, and goes on through KCSAN's protocol as a
 * marked access.  Only the process's own accesses teach it, and in a shared
 * mapping the other processes' too.
 */
static __always_inline int atomic_learned(const struct kcsand_site *site, __u64 addr)
{
	struct kcsand_atomic_key k = { .tgid = bpf_get_current_pid_tgid() >> 32, .addr = addr };

	if (site->flags & KCSAND_SITE_TEACHES) {
		atomic_teach(&k);
		return 0;
	}
	/*
	 * Only a load or a store: x86 has no atomic plain read-modify-write,
	 * so `addl $1,(mem)` on an atomic object is a lost update, still a race.
	 */
	if ((site->flags & (KCSAND_SITE_MARKED | KCSAND_SITE_DATA_RACE | KCSAND_SITE_SRC_PLAIN)) ||
	    (site->flags & (KCSAND_SITE_READ | KCSAND_SITE_WRITE)) ==
		    (KCSAND_SITE_READ | KCSAND_SITE_WRITE))
		return 0;
	if (!atomic_known(&k))
		return 0;
	__sync_fetch_and_add(&atomics_plain_hits, 1);
	return 1;
}

#endif

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The tables of the marking rules (see mark.h and docs/marking.md), in one
 * place:
 *
 *	accessors[]	function names whose accesses are marked (inline accessor rule)
 *	io_accessors[]	function names whose accesses reach device memory (never watched)
 *	src_markers[]	source tokens that mark the accesses of their call (source rule)
 *
 * The qualifier rule has no table: _Atomic and volatile are the qualifiers.
 */
#include <string.h>

#include "mark_int.h"

/* ------------------------------------------------------------ inline accessor rule */

/*
 * Functions whose memory accesses are marked, by qualified-name prefix.
 * out_of_line: also when the site is in the function's own out-of-line
 * copy, not only where it is inlined.  Kernel accessors are
 * __always_inline; an out-of-line function named atomic_* (say
 * atomic_notifier_call_chain) is ordinary code, so they count only inlined.
 * libstdc++'s atomics are called out of line at -O0.
 */
struct accessor {
	const char *name;
	bool exact;		/* the name itself, not a prefix */
	bool out_of_line;
};

static const struct accessor accessors[] = {
	/* Linux: include/linux/atomic/atomic-{instrumented,arch-fallback,long}.h */
	{ "atomic_", false, false },		/* atomic_read, atomic_set, atomic_long_* ... */
	{ "atomic64_", false, false },
	{ "raw_atomic_", false, false },	/* raw_atomic_read, raw_atomic_long_* ... */
	{ "raw_atomic64_", false, false },
	{ "arch_atomic_", false, false },	/* arch_atomic_read (READ_ONCE inside) ... */
	{ "arch_atomic64_", false, false },
	/*
	 * test_bit() is an atomic read for KCSAN (instrument_atomic_read in
	 * asm-generic/bitops/instrumented-non-atomic.h), a plain mov on x86.
	 * __test_and_set_bit() and the other non-atomic bitops stay plain.
	 */
	{ "test_bit", false, false },		/* test_bit, test_bit_acquire */
	{ "_test_bit", false, false },
	{ "arch_test_bit", false, false },
	{ "constant_test_bit", false, false },
	{ "variable_test_bit", false, false },
	/* READ_ONCE's helpers where they are functions (older kernels, other arches) */
	{ "__READ_ONCE", false, false },
	{ "__WRITE_ONCE", false, false },
	{ "__read_once_size", false, false },
	{ "__write_once_size", false, false },
	/* libstdc++ <atomic>, <bits/atomic_base.h> */
	{ "std::atomic<", false, true },	/* std::atomic<T>::load, store, operator T ... */
	{ "std::__atomic_base<", false, true },
	{ "std::__atomic_float<", false, true },
	{ "std::__atomic_ref<", false, true },
	{ "std::atomic_ref<", false, true },
	{ "std::__atomic_impl::", false, true },
	{ "std::atomic_flag::", false, true },
	{ "std::atomic_load", false, true },	/* std::atomic_load, std::atomic_load_explicit */
	{ "std::atomic_store", false, true },
};

static const char *match_accessor(const struct accessor *table, size_t n, const char *name,
				  bool inlined)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct accessor *a = &table[i];

		if (!inlined && !a->out_of_line)
			continue;
		if (a->exact ? !strcmp(name, a->name) : !strncmp(name, a->name, strlen(a->name)))
			return a->name;
	}
	return NULL;
}

const char *mark__accessor_match(const char *name, bool inlined)
{
	return match_accessor(accessors, sizeof(accessors) / sizeof(accessors[0]), name, inlined);
}

/*
 * Device-memory accessors (arch/x86/include/asm/io.h, lib/iomap.c): a mov
 * to MMIO inside readl() and the like.  Reading such an address again to
 * compare values has side effects (read-to-clear registers), and KCSAN
 * never instruments them: their sites are never watched.  exact: the name
 * itself, not a prefix (readl, not readlink).
 */
static const struct accessor io_accessors[] = {
	{ "readb", true }, { "readw", true }, { "readl", true }, { "readq", true },
	{ "writeb", true }, { "writew", true }, { "writel", true }, { "writeq", true },
	{ "__readb", true }, { "__readw", true }, { "__readl", true }, { "__readq", true },
	{ "__writeb", true }, { "__writew", true }, { "__writel", true }, { "__writeq", true },
	{ "__raw_read", false },	/* __raw_readb ... __raw_readq */
	{ "__raw_write", false },
	{ "ioread", false, true },	/* ioread8 ... ioread64_hi_lo, ioread32be */
	{ "iowrite", false, true },
	{ "__ioread", false, true },
	{ "__iowrite", false, true },	/* __iowrite32_copy */
	{ "memcpy_fromio", true, true },
	{ "memcpy_toio", true, true },
	{ "memset_io", true, true },
	{ "__memcpy_fromio", true, true },
	{ "__memcpy_toio", true, true },
};

const char *mark__io_accessor_match(const char *name, bool inlined)
{
	return match_accessor(io_accessors, sizeof(io_accessors) / sizeof(io_accessors[0]), name,
			      inlined);
}

/* ------------------------------------------------------------ source rule */

/*
 * Source tokens that mark the accesses inside their call, "TOKEN(...)".
 * Stores mark only their first argument (the location): the value stored
 * is read by a plain access.
 */
static const struct src_marker src_markers[] = {
	{ "data_race", MARK_KIND_DATA_RACE, 0 },
	/* Linux */
	{ "READ_ONCE", MARK_KIND_MARKED, SRC_PREFIX },		/* READ_ONCE_NOCHECK */
	{ "__READ_ONCE", MARK_KIND_MARKED, 0 },
	{ "WRITE_ONCE", MARK_KIND_MARKED, SRC_FIRST_ARG },
	{ "__WRITE_ONCE", MARK_KIND_MARKED, SRC_FIRST_ARG },
	{ "smp_load_acquire", MARK_KIND_MARKED, 0 },
	{ "smp_store_release", MARK_KIND_MARKED, SRC_FIRST_ARG },
	{ "rcu_dereference", MARK_KIND_MARKED, SRC_PREFIX },	/* _check, _protected, _raw ... */
	{ "rcu_access_pointer", MARK_KIND_MARKED, 0 },
	{ "rcu_assign_pointer", MARK_KIND_MARKED, SRC_FIRST_ARG },
	{ "atomic_read", MARK_KIND_MARKED, SRC_PREFIX },	/* atomic_read_acquire */
	{ "atomic_set", MARK_KIND_MARKED, SRC_PREFIX | SRC_FIRST_ARG },
	{ "atomic64_read", MARK_KIND_MARKED, SRC_PREFIX },
	{ "atomic64_set", MARK_KIND_MARKED, SRC_PREFIX | SRC_FIRST_ARG },
	{ "atomic_long_read", MARK_KIND_MARKED, SRC_PREFIX },
	{ "atomic_long_set", MARK_KIND_MARKED, SRC_PREFIX | SRC_FIRST_ARG },
	{ "srcu_dereference", MARK_KIND_MARKED, SRC_PREFIX },	/* _check, _notrace */
	{ "smp_cond_load_", MARK_KIND_MARKED, SRC_PREFIX },	/* _acquire, _relaxed */
	{ "atomic_cond_read_", MARK_KIND_MARKED, SRC_PREFIX },
	/*
	 * Linux's RCU and lockless list macros (linux/rculist.h,
	 * linux/rculist_nulls.h, linux/rculist_bl.h): their loads are READ_ONCE() or
	 * rcu_dereference*() inside the macro's definition, which the site's
	 * line does not show.  Every load a loop macro's own call makes is one.
	 */
	{ "list_entry_rcu", MARK_KIND_MARKED, 0 },
	{ "list_entry_lockless", MARK_KIND_MARKED, 0 },
	{ "list_first_or_null_rcu", MARK_KIND_MARKED, 0 },
	{ "list_next_or_null_rcu", MARK_KIND_MARKED, 0 },
	{ "list_for_each_entry_rcu", MARK_KIND_MARKED, 0 },
	{ "list_for_each_entry_srcu", MARK_KIND_MARKED, 0 },
	{ "list_for_each_entry_lockless", MARK_KIND_MARKED, 0 },
	{ "list_for_each_entry_continue_rcu", MARK_KIND_MARKED, 0 },
	{ "list_for_each_entry_from_rcu", MARK_KIND_MARKED, 0 },
	{ "hlist_for_each_entry_rcu", MARK_KIND_MARKED, SRC_PREFIX },	/* _bh, _notrace */
	{ "hlist_for_each_entry_srcu", MARK_KIND_MARKED, 0 },
	{ "hlist_for_each_entry_continue_rcu", MARK_KIND_MARKED, SRC_PREFIX },	/* _bh */
	{ "hlist_for_each_entry_from_rcu", MARK_KIND_MARKED, 0 },
	{ "hlist_nulls_for_each_entry_rcu", MARK_KIND_MARKED, 0 },
	{ "hlist_nulls_for_each_entry_safe", MARK_KIND_MARKED, 0 },
	{ "hlist_bl_for_each_entry_rcu", MARK_KIND_MARKED, 0 },
	{ "list_for_each_rcu", MARK_KIND_MARKED, 0 },
	{ "__hlist_for_each_rcu", MARK_KIND_MARKED, 0 },
	{ "list_first_entry_or_null", MARK_KIND_MARKED, 0 },
	{ "rht_dereference", MARK_KIND_MARKED, SRC_PREFIX },	/* _rcu, _bucket, _bucket_rcu */
	{ "rht_for_each_rcu", MARK_KIND_MARKED, SRC_PREFIX },	/* _from */
	{ "rhl_for_each_rcu", MARK_KIND_MARKED, 0 },
	{ "rhl_for_each_entry_rcu", MARK_KIND_MARKED, 0 },
	{ "rtnl_dereference", MARK_KIND_MARKED, 0 },
	{ "rcu_replace_pointer", MARK_KIND_MARKED, 0 },
	{ "for_each_domain", MARK_KIND_MARKED, 0 },
	/*
	 * Other macros of fs/, mm/, kernel/ and include/linux/ with READ_ONCE()
	 * or rcu_dereference*() in their definitions (6.1).
	 */
	{ "RB_EMPTY_ROOT", MARK_KIND_MARKED, 0 },
	{ "get_current_state", MARK_KIND_MARKED, 0 },
	{ "task_is_running", MARK_KIND_MARKED, 0 },
	{ "task_is_traced", MARK_KIND_MARKED, 0 },
	{ "task_is_stopped", MARK_KIND_MARKED, SRC_PREFIX },	/* _or_traced */
	{ "current_cred", MARK_KIND_MARKED, 0 },
	{ "current_real_cred", MARK_KIND_MARKED, 0 },
	{ "__task_cred", MARK_KIND_MARKED, 0 },
	{ "files_fdtable", MARK_KIND_MARKED, 0 },
	{ "rcu_preempt_depth", MARK_KIND_MARKED, 0 },
	{ "buddy_order_unsafe", MARK_KIND_MARKED, 0 },
	{ "slub_percpu_partial_read_once", MARK_KIND_MARKED, 0 },
	{ "add_positive", MARK_KIND_MARKED, 0 },		/* sched/fair.c: READ_ONCE, WRITE_ONCE */
	{ "sub_positive", MARK_KIND_MARKED, 0 },
	/* C11 <stdatomic.h> */
	{ "atomic_load", MARK_KIND_MARKED, SRC_PREFIX },	/* atomic_load_explicit */
	{ "atomic_store", MARK_KIND_MARKED, SRC_PREFIX | SRC_FIRST_ARG },
	/* GCC builtins: __atomic_load_n, __atomic_store_n, __atomic_load ... */
	{ "__atomic_", MARK_KIND_MARKED, SRC_PREFIX },
	/* The legacy spinlock's release: a plain mov of 0 on x86. */
	{ "__sync_lock_release", MARK_KIND_MARKED, SRC_FIRST_ARG },
	/* C++ std::atomic */
	{ "load", MARK_KIND_MARKED, SRC_METHOD },
	{ "store", MARK_KIND_MARKED, SRC_METHOD | SRC_FIRST_ARG },
};

const struct src_marker *mark_find_marker(const char *id, size_t len, bool method)
{
	for (size_t i = 0; i < sizeof(src_markers) / sizeof(src_markers[0]); i++) {
		const struct src_marker *m = &src_markers[i];
		size_t n = strlen(m->name);

		if (!!(m->flags & SRC_METHOD) != method)
			continue;
		if (n == len && !memcmp(id, m->name, n))
			return m;
		if ((m->flags & SRC_PREFIX) && len > n && !memcmp(id, m->name, n))
			return m;
	}
	return NULL;
}

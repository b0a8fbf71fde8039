// SPDX-License-Identifier: GPL-2.0-only
/*
 * Atomic read-modify-writes on both sides: marked accesses never set
 * watchpoints and two marked accesses never race, so nothing may ever be
 * reported.  The three common x86 forms of an atomic RMW are covered:
 *
 * gcc 12 -O1:  atomic_add:  lock addl $0x1,x(%rip)   (lock prefix, result unused)
 *              atomic_xadd: lock xadd %eax,x(%rip)   (lock prefix, result used)
 *              atomic_swap: xchg %eax,x(%rip)        (implicitly locked, no prefix)
 */
#include "scenario.h"

/* Race-free: about 3 s under kcsand (one probed access per call). */
#define ITERS 100000

int x;

RACY void atomic_add(void)
{
	__atomic_fetch_add(&x, 1, __ATOMIC_RELAXED);
}

RACY int atomic_xadd(void)
{
	return __atomic_fetch_add(&x, 1, __ATOMIC_RELAXED);
}

RACY int atomic_swap(int v)
{
	return __atomic_exchange_n(&x, v, __ATOMIC_RELAXED);
}

SCENARIO_LOOP(add_thread, atomic_add())

static void *xadd_swap_thread(void *arg)
{
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i += 2) {
		atomic_swap(atomic_xadd() + 1);
		barrier();
	}
	return NULL;
}

SCENARIO_MAIN(ITERS, add_thread, xadd_swap_thread)

/* kcsand-test: name=atomic_rmw_both expect=none */

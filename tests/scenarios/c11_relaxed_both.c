// SPDX-License-Identifier: GPL-2.0-only
/*
 * C11 relaxed atomics on both sides: atomic_load_explicit() racing with
 * atomic_store_explicit(), both memory_order_relaxed.  On x86 both are
 * plain movs, so only marking tells them from a data race; here x is an
 * _Atomic global, so the qualifier rule marks both (the source rule would
 * too).  Two marked accesses never race: nothing may be reported.
 *
 * gcc 12 -O1:  relaxed_load:  mov x(%rip),%eax      (plain-looking 4-byte load)
 *              relaxed_store: mov %edi,x(%rip)      (plain-looking 4-byte store)
 */
#include <stdatomic.h>
#include "scenario.h"

/* Race-free: about 6 s under kcsand (one probed access per call). */
#define ITERS 100000

_Atomic int x;

RACY int relaxed_load(void)
{
	return atomic_load_explicit(&x, memory_order_relaxed);
}

RACY void relaxed_store(int v)
{
	atomic_store_explicit(&x, v, memory_order_relaxed);
}

SCENARIO_LOOP(load_thread, relaxed_load())

SCENARIO_LOOP(store_thread, relaxed_store(i + 1))

SCENARIO_MAIN(ITERS, load_thread, store_thread)

/* kcsand-test: name=c11_relaxed_both expect=none */

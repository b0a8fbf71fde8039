// SPDX-License-Identifier: GPL-2.0-only
/*
 * C++ std::atomic<int>: a relaxed load racing with a relaxed store.  At
 * -O1 both members are inlined; the sites lie in inlined
 * std::__atomic_base<int>::load / store, which the inline accessor rule
 * marks.  Two marked accesses never race: nothing may be reported.
 *
 * g++ 12 -O1:  load_x:  mov x(%rip),%eax     (plain-looking 4-byte load)
 *              store_x: mov %edi,x(%rip)     (plain-looking 4-byte store)
 */
#include <atomic>
#include "scenario.h"

/* Race-free: about 6 s under kcsand (one probed access per call). */
#define ITERS 100000

std::atomic<int> x;

extern "C" RACY int load_x(void)
{
	return x.load(std::memory_order_relaxed);
}

extern "C" RACY void store_x(int v)
{
	x.store(v, std::memory_order_relaxed);
}

SCENARIO_LOOP(load_thread, load_x())

SCENARIO_LOOP(store_thread, store_x(i + 1))

SCENARIO_MAIN(ITERS, load_thread, store_thread)

/* kcsand-test: name=cxx_atomic_load_store expect=none */

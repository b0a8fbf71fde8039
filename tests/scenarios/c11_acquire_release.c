// SPDX-License-Identifier: GPL-2.0-only
/*
 * A C11 acquire load racing with a release store, through a pointer: the
 * accessed address is only known at run time, so the qualifier rule
 * cannot see the _Atomic object and the source rule decides, from the
 * atomic_load_explicit() / atomic_store_explicit() at the sites' lines.
 * Both accesses are marked: nothing may be reported.
 *
 * gcc 12 -O1:  acquire_load:  mov (%rdi),%eax       (plain-looking 4-byte load)
 *              release_store: mov %esi,(%rdi)       (plain-looking 4-byte store)
 */
#include <stdatomic.h>
#include "scenario.h"

/* Race-free: about 6 s under kcsand (one probed access per call). */
#define ITERS 100000

static _Atomic int flag;

RACY int acquire_load(_Atomic int *p)
{
	return atomic_load_explicit(p, memory_order_acquire);
}

RACY void release_store(_Atomic int *p, int v)
{
	atomic_store_explicit(p, v, memory_order_release);
}

SCENARIO_LOOP(load_thread, acquire_load(&flag))

SCENARIO_LOOP(store_thread, release_store(&flag, i + 1))

SCENARIO_MAIN(ITERS, load_thread, store_thread)

/* kcsand-test: name=c11_acquire_release expect=none */

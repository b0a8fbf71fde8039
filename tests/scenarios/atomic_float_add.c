// SPDX-License-Identifier: GPL-2.0-only
/*
 * A race-free C11 atomic add on a float, from two threads.
 *
 * x86 has no atomic add for floats: gcc loads the value plainly, then loops
 * on lock cmpxchg until no other thread changed it in between.  The plain
 * load is that atomic operation's read; kcsand marks it ("cas loop read")
 * instead of reporting it against the other thread's cmpxchg.  It is built
 * without DWARF, so that no _Atomic qualifier marks the load instead.
 *
 * gcc 12 -O1 -fno-trapping-math (no fenv calls, no libatomic):
 *              add: mov eax,[rip+total]; mov [rbp-0x4],eax; ... mov eax,[rbp-0x4];
 *              lock cmpxchg [rip+total],esi; ... jmp back
 */
#include <stdatomic.h>

#include "scenario.h"

#define ITERS 20000

_Atomic float total;

RACY void add(float v)
{
	total += v;
}

static void *adder(void *arg)
{
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i++)
		add(1.0f);
	return NULL;
}

int main(void)
{
	void *(*const fn[])(void *) = { adder, adder };
	long n = scenario_iters(ITERS);

	run_threads(2, fn, (void *)n);
	if (total != (float)(2 * n)) {
		fprintf(stderr, "atomic_float_add: total %f, expected %ld\n", total, 2 * n);
		return 1;
	}
	return 0;
}

/* kcsand-test: name=atomic_float_add args="-v --overhead-budget 100 --no-marking" iters=20000 expect=none log_re="^kcsand: site .* add\+0x[0-9a-f]+ read 4 marked \(cas loop read\)$" log_re="armed_sites: [1-9]" */

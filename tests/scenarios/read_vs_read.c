// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two threads only read the same variable: reads never conflict, so
 * although both set watchpoints, neither may ever report.
 *
 * gcc 12 -O1:  reader_a, reader_b: mov x(%rip),%eax   (plain 4-byte loads)
 */
#include "scenario.h"

/* Race-free: about 3 s under kcsand (one probed access per iteration). */
#define ITERS 100000

/* Written only before the threads start. */
int x = 42;

RACY int reader_a(void)
{
	return x;
}

RACY int reader_b(void)
{
	return x;
}

SCENARIO_LOOP(thread_a, reader_a())

SCENARIO_LOOP(thread_b, reader_b())

SCENARIO_MAIN(ITERS, thread_a, thread_b)

/* kcsand-test: name=read_vs_read expect=none */

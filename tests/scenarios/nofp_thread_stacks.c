// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stacks through code without frame pointers, to the thread's first frame.
 *
 * Built -O2 -fomit-frame-pointer, as distributions build: no function here
 * keeps a frame pointer, and neither does glibc's start_thread.  Each
 * worker thread runs worker() -> tally() -> add(), and add() increments a
 * shared counter without synchronization: a real race in add().  A
 * frame-pointer walk reads rbp, an ordinary register here, and stops after
 * the access (or at a word of data); the CFI in .eh_frame unwinds every
 * frame, through libc's start_thread, to __clone3, where a thread begins.
 */
#include "scenario.h"

/* Racy: about 10 s under kcsand. */
#define ITERS 200000

long total;

RACY void add(long v)
{
	total += v;
}

/* Work after the call, so that gcc cannot turn it into a jump (no frame). */
RACY long tally(long v)
{
	add(v);
	return v * 3 + 1;
}

RACY void *worker(void *arg)
{
	long i, n = (long)arg, sum = 0;

	wait_for_start();
	for (i = 0; i < n; i++) {
		sum += tally(i);
		barrier();
	}
	return (void *)sum;
}

SCENARIO_MAIN(ITERS, worker, worker)

/* Found by the history (its earlier access's stack copied when it ran) or by a watchpoint. */
/* kcsand-test: name=nofp_thread_stacks args="--halt-on-error" iters=2000000 expect=report title="data-race in add / add" access="^ add\+0x[0-9a-f]+/0x[0-9a-f]+ .*nofp_thread_stacks.c:[0-9]+$" access="^ add\+0x[0-9a-f]+/0x[0-9a-f]+ .*nofp_thread_stacks.c:[0-9]+$" access="^ tally\+0x[0-9a-f]+/0x[0-9a-f]+ " access="^ tally\+0x[0-9a-f]+/0x[0-9a-f]+ " access="^ worker\+0x[0-9a-f]+/0x[0-9a-f]+ " access="^ worker\+0x[0-9a-f]+/0x[0-9a-f]+ " stack_tail="start_thread __clone3" */
/* KCSAN's protocol alone: the watcher's and the consumer's stacks. */
/* kcsand-test: name=nofp_thread_stacks_watchpoint args="--halt-on-error --no-history" iters=2000000 expect=report title="data-race in add / add" access="^ add\+0x[0-9a-f]+/0x[0-9a-f]+ .*nofp_thread_stacks.c:[0-9]+$" access="^ add\+0x[0-9a-f]+/0x[0-9a-f]+ .*nofp_thread_stacks.c:[0-9]+$" access="^ tally\+0x[0-9a-f]+/0x[0-9a-f]+ " access="^ tally\+0x[0-9a-f]+/0x[0-9a-f]+ " access="^ worker\+0x[0-9a-f]+/0x[0-9a-f]+ " access="^ worker\+0x[0-9a-f]+/0x[0-9a-f]+ " stack_tail="start_thread __clone3" */

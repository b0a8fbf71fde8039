// SPDX-License-Identifier: GPL-2.0-only
/*
 * A race through rbp, in code built without frame pointers.
 *
 * Built with -O2 and no -fno-omit-frame-pointer (tests/tests.mk), as most
 * distribution programs and Debian's kernel are: gcc then keeps one of
 * account()'s pointers, live across calls, in rbp, an ordinary callee-saved
 * register.  Both threads increment the same counter through it; kcsand used
 * to skip every rbp-based operand as "stack" and saw nothing.
 *
 * gcc 12 -O2:  account: push rbp; mov rbp,rdi; ... add QWORD PTR [rbp+0x0],0x1
 */
#include "scenario.h"

/* Racy: about 10 s under kcsand. */
#define ITERS 200000

struct rec {
	long hits;
	long last;
};

struct rec recs[3];

/* An opaque call, so that the pointers must survive it in callee-saved registers. */
RACY void note(long v)
{
	barrier();
}

RACY void account(struct rec *a, struct rec *b, long v)
{
	note(v);
	a->hits++;
	note(v);
	b->last = v;
	note(v);
}

static void *thread0(void *arg)
{
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i++)
		account(&recs[0], &recs[1], i);
	return NULL;
}

static void *thread1(void *arg)
{
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i++)
		account(&recs[0], &recs[2], i);
	return NULL;
}

int main(void)
{
	void *(*const fn[])(void *) = { thread0, thread1 };

	run_threads(2, fn, (void *)scenario_iters(ITERS));
	return 0;
}

/* kcsand-test: name=rbp_shared_pointer args="--halt-on-error" iters=2000000 expect=report title="data-race in account / account" access="^read-write to 0x[0-9a-f]+ of 8 bytes by task [0-9]+ on cpu [0-9]+:$" access="^read-write to 0x[0-9a-f]+ of 8 bytes by task [0-9]+ on cpu [0-9]+:$" */

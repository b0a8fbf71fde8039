// SPDX-License-Identifier: GPL-2.0-only
/*
 * A racy OpenMP loop, built as distributions build it: -O2, no frame
 * pointers, like the libgomp it runs in.
 *
 * Every iteration of the parallel loop increments one shared counter
 * without synchronization: a real race in bump().  The report's stacks go
 * through libgomp, which has no frame pointers; a frame-pointer walk then
 * reads stack words as return addresses (0x300000002, stack addresses).
 * Every frame printed must be code: named by its function, or by its object
 * and offset (libgomp's static functions, which the CFI unwind reaches, are
 * object@0xSTART+0xoff/0xsize).
 */
#include <stdio.h>
#include <stdlib.h>

#define N	64
#define ROUNDS	2000

long counter;

__attribute__((noipa)) void bump(long v)
{
	counter += v;
}

__attribute__((noipa)) void run(void)
{
	int i;

#pragma omp parallel for num_threads(2)
	for (i = 0; i < N; i++)
		bump(i);
}

int main(void)
{
	const char *s = getenv("KCSAND_TEST_ITERS");
	long rounds = s && atol(s) > 0 ? atol(s) : ROUNDS, r;

	for (r = 0; r < rounds; r++)
		run();
	printf("counter %ld\n", counter);
	return 0;
}

/* kcsand-test: name=omp_racy_nofp args="--halt-on-error" iters=20000 expect=report title="data-race in bump / bump" access="^ run\._omp_fn\.0\+0x[0-9a-f]+/0x[0-9a-f]+ " frames_re="^ ([A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+/0x[0-9a-f]+( .*)?|[^ @]+@0x[0-9a-f]+\+0x[0-9a-f]+/0x[0-9a-f]+|0x[0-9a-f]+ \([^ ]+\+0x[0-9a-f]+\))$" */

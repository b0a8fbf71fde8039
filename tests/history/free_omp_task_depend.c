// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: producer and consumer tasks ordered by depend(out) and
 * depend(in) on the same variable, in a chain of rounds.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define ROUNDS 100

static long item, sum;

static SITE void produce(long v)
{
	item = v;
}

static SITE void consume(void)
{
	sum += item;
}

int main(void)
{
#pragma omp parallel num_threads(2)
#pragma omp single
	{
		long i;

		for (i = 0; i < ROUNDS; i++) {
#pragma omp task depend(out: item) firstprivate(i)
			produce(i);
#pragma omp task depend(in: item) depend(inout: sum)
			consume();
		}
	}
	return sum != (long)ROUNDS * (ROUNDS - 1) / 2;
}

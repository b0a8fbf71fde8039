// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: undeferred tasks (if(0)).  The creator is suspended until
 * such a task completes, on whatever thread, so it reads what the task
 * wrote right after, with no taskwait.  The task also reads what the
 * creator wrote before creating it.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define ROUNDS 200

static long in, out;

static SITE void put_in(long v)
{
	in = v;
}

static SITE void square(void)
{
	out = in * in;
}

static SITE long get_out(void)
{
	return out;
}

int main(void)
{
	long sum = 0;

#pragma omp parallel num_threads(2)
#pragma omp single
	{
		long i;

		for (i = 0; i < ROUNDS; i++) {
			put_in(i);
#pragma omp task if(0)
			square();
			sum += get_out();
		}
	}
	return sum != (long)(ROUNDS - 1) * ROUNDS * (2 * ROUNDS - 1) / 6;
}

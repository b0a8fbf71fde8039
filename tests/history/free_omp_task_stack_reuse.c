// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: recursive tasks that return their results through their
 * parent's locals.  Each call creates two tasks, each writing one local of
 * the caller's frame, and waits for them.  The tasks share their thread's
 * stack: a call's frame lies where the frame of an earlier call died, one
 * that an unrelated task (a cousin, not ordered with this one) ran, and its
 * locals at the same addresses.  The memory changed owner when the old
 * frame died; the writes to the same address are not a race.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define DEPTH 11

static SITE void put(long *where, long v)
{
	*where = v;
}

static long count(int depth)
{
	long left, right;

	if (depth == 0)
		return 1;
#pragma omp task shared(left)
	put(&left, count(depth - 1));
#pragma omp task shared(right)
	put(&right, count(depth - 1));
#pragma omp taskwait
	return left + right;
}

int main(void)
{
	long n = 0;

#pragma omp parallel num_threads(2)
#pragma omp single
	n = count(DEPTH);
	return n != 1L << DEPTH;
}

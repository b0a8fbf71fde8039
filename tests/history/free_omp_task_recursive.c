// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a recursive computation in OpenMP tasks, each task storing
 * its result in a slot of its parent's frame, which the parent reads after
 * its taskwait.  A thread waiting in GOMP_taskwait runs other tasks, whose
 * own taskwaits run more: the sync calls in progress on one thread nest as
 * deep as the recursion, more than the history kept (8) before.  A return
 * it did not keep is now taken to acquire everything, never to acquire
 * nothing.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define DEPTH	16
#define ROUNDS	40

static SITE void store(long *slot, long v)
{
	*slot = v;
}

static SITE long load(const long *slot)
{
	return *slot;
}

static long count(int depth)
{
	long left = 0, right = 0;

	if (depth == 0)
		return 1;
#pragma omp task shared(left)
	store(&left, count(depth - 1));
#pragma omp task shared(right) if (depth > DEPTH - 4)
	store(&right, depth & 1);
#pragma omp taskwait
	return load(&left) + load(&right);
}

int main(void)
{
	long total = 0;

	for (int r = 0; r < ROUNDS; r++) {
#pragma omp parallel num_threads(2)
#pragma omp single
		total += count(DEPTH);
	}
	return total != ROUNDS * (1 + DEPTH / 2L);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: phases separated by omp barrier.  Each thread writes its own
 * cell, and past the barrier reads its neighbour's, then waits again
 * before its next write.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define PHASES 200

static long cell[2];

static SITE void publish(int me, long v)
{
	cell[me] = v;
}

static SITE long look(int other)
{
	return cell[other];
}

int main(void)
{
	long sum = 0;

#pragma omp parallel num_threads(2) reduction(+:sum)
	{
		int me = omp_get_thread_num(), i;

		for (i = 0; i < PHASES; i++) {
			publish(me, i);
#pragma omp barrier
			sum += look(!me);
#pragma omp barrier
		}
	}
	return sum < 0;
}

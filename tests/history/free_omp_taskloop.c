// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a taskloop fills a shared array; the taskloop's implicit
 * taskgroup orders every fill before the creator sums the array and the
 * next round refills it.  GOMP_taskloop creates its tasks inside libgomp,
 * not through GOMP_task.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define ROUNDS 30
#define N 64

static long cell[N];

static SITE void fill(int k, long v)
{
	cell[k] = v;
}

static SITE long sum_cells(void)
{
	long s = 0;
	int k;

	for (k = 0; k < N; k++)
		s += cell[k];
	return s;
}

int main(void)
{
	long total = 0;

#pragma omp parallel num_threads(2)
#pragma omp single
	{
		int r;

		for (r = 0; r < ROUNDS; r++) {
#pragma omp taskloop grainsize(8)
			for (int k = 0; k < N; k++)
				fill(k, r);
			total += sum_cells();
		}
	}
	return total != (long)N * ROUNDS * (ROUNDS - 1) / 2;
}

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
#define SLOTS 64

SUITE_SLOTS(SLOTS)

int main(void)
{
	long total = 0;

#pragma omp parallel num_threads(2)
#pragma omp single
	{
		int r;

		for (r = 0; r < ROUNDS; r++) {
#pragma omp taskloop grainsize(8)
			for (int k = 0; k < SLOTS; k++)
				fill(k, r);
			total += sum_slots();
		}
	}
	return total != slots_filled(ROUNDS);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: tasks created in a single construct complete at the barrier
 * that ends it, whichever thread runs them: after it, every thread of the
 * team reads what the tasks wrote, and before the next round's tasks a
 * second barrier orders the reads before the rewrites.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define ROUNDS 30
#define SLOTS 8

SUITE_SLOTS(SLOTS)

int main(void)
{
	long total = 0;

#pragma omp parallel num_threads(2) reduction(+:total)
	{
		int r;

		for (r = 0; r < ROUNDS; r++) {
#pragma omp single
			{
				int k;

				for (k = 0; k < SLOTS; k++) {
#pragma omp task firstprivate(k, r)
					fill(k, r);
				}
			}
			total += sum_slots();
#pragma omp barrier
		}
	}
	return total != 2 * slots_filled(ROUNDS);	/* each thread sums */
}

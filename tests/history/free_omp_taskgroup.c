// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a taskgroup waits for its tasks and all their descendants.
 * In each round a task creates grandchildren that fill the slots of a
 * shared array, and returns without waiting for them; the end of the
 * taskgroup orders every fill before the parent sums the slots and the
 * next round refills them.  (A taskwait there would wait for the child
 * alone: tests/history/racy_omp_taskwait_grandchild.c.)
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

#pragma omp parallel num_threads(2)
#pragma omp single
	{
		int r;

		for (r = 0; r < ROUNDS; r++) {
#pragma omp taskgroup
			{
#pragma omp task firstprivate(r)
				{
					int k;

					for (k = 0; k < SLOTS; k++) {
#pragma omp task firstprivate(k, r)
						fill(k, r);
					}
				}
			}
			total += sum_slots();
		}
	}
	return total != slots_filled(ROUNDS);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: tasks fill slots of a shared array; taskwait orders them
 * before the parent reads the slots and refills them in the next round.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define ROUNDS 50
#define SLOTS 8

SUITE_SLOTS(SLOTS)

int main(void)
{
	long total = 0;

#pragma omp parallel num_threads(2)
#pragma omp single
	{
		int r, k;

		for (r = 0; r < ROUNDS; r++) {
			for (k = 0; k < SLOTS; k++) {
#pragma omp task firstprivate(k, r)
				fill(k, r);
			}
#pragma omp taskwait
			total += sum_slots();
		}
	}
	return total != slots_filled(ROUNDS);
}

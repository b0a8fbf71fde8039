// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: in each round, each section of a construct fills its own
 * slot and counts itself under a critical section; the construct's end
 * orders the sections before the single that sums the slots, whose end
 * orders the sum before the next round's sections.  A section runs on a
 * clock of its own, and one thread often runs several of them: what the
 * thread does after the construct must still come after all of them.
 * The second construct is `parallel sections`, whose team ends with it:
 * main reads the slots after it.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define ROUNDS 50
#define SLOTS 4

SUITE_SLOTS(SLOTS)

static long count;

static SITE void count_section(void)
{
	count++;
}

static void section(int k, long r)
{
	fill(k, r);
#pragma omp critical
	count_section();
}

int main(void)
{
	long total = 0;

#pragma omp parallel num_threads(2)
	for (long r = 0; r < ROUNDS; r++) {
#pragma omp sections
		{
#pragma omp section
			section(0, r);
#pragma omp section
			section(1, r);
#pragma omp section
			section(2, r);
#pragma omp section
			section(3, r);
		}
#pragma omp single
		total += sum_slots();
	}
#pragma omp parallel sections num_threads(2)
	{
#pragma omp section
		section(0, 1);
#pragma omp section
		section(1, 1);
	}
	return total != slots_filled(ROUNDS) || sum_slots() != 2 + 2 * (ROUNDS - 1) ||
	       count != SLOTS * ROUNDS + 2;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: one thread sets up shared state in single; the implicit
 * barrier at the end of single orders it before every thread's reads.
 * free_omp_master_barrier.c builds the same program with master and an
 * explicit barrier instead (MASTER_THEN_BARRIER).
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define ROUNDS 100

SUITE_SHARED(long, config, set_config, get_config)

int main(void)
{
	long sum = 0;

#pragma omp parallel num_threads(2) reduction(+:sum)
	{
		int i;

		for (i = 0; i < ROUNDS; i++) {
#ifdef MASTER_THEN_BARRIER
#pragma omp master
			set_config(i);
#pragma omp barrier
#else
#pragma omp single
			set_config(i);
#endif
			sum += get_config();
#pragma omp barrier
		}
	}
	return sum < 0;
}

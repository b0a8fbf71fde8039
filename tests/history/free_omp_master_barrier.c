// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: the master thread writes shared state (master has no barrier
 * of its own); an explicit barrier orders it before the other threads'
 * reads, and another before the next write.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define ROUNDS 100

static long config;

static SITE void set_config(long v)
{
	config = v;
}

static SITE long get_config(void)
{
	return config;
}

int main(void)
{
	long sum = 0;

#pragma omp parallel num_threads(2) reduction(+:sum)
	{
		int i;

		for (i = 0; i < ROUNDS; i++) {
#pragma omp master
			set_config(i);
#pragma omp barrier
			sum += get_config();
#pragma omp barrier
		}
	}
	return sum < 0;
}

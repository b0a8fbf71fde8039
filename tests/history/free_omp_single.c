// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: one thread sets up shared state in single; the implicit
 * barrier at the end of single orders it before every thread's reads.
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
#pragma omp single
			set_config(i);
			sum += get_config();
#pragma omp barrier
		}
	}
	return sum < 0;
}

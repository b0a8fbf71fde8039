// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: shared counters under OpenMP locks, a simple lock
 * (omp_set_lock, and omp_test_lock) and a nestable one taken twice.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define N 1000

static omp_lock_t lock;
static omp_nest_lock_t nest;
static long counter, nested;

static SITE void bump(long *c)
{
	(*c)++;
}

int main(void)
{
	int i;

	omp_init_lock(&lock);
	omp_init_nest_lock(&nest);
#pragma omp parallel for num_threads(2)
	for (i = 0; i < N; i++) {
		if (i % 2) {
			omp_set_lock(&lock);
		} else {
			while (!omp_test_lock(&lock))
				;
		}
		bump(&counter);
		omp_unset_lock(&lock);
		omp_set_nest_lock(&nest);
		omp_set_nest_lock(&nest);
		bump(&nested);
		omp_unset_nest_lock(&nest);
		omp_unset_nest_lock(&nest);
	}
	omp_destroy_lock(&lock);
	omp_destroy_nest_lock(&nest);
	return counter != N || nested != N;
}

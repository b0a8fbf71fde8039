// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: shared counters updated by omp atomic: an int (a lock-prefixed
 * instruction) and a long double (which gcc implements with
 * GOMP_atomic_start and GOMP_atomic_end around plain accesses).
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define N 1000

static int count;
static long double weight;

int main(void)
{
	int i;

#pragma omp parallel for num_threads(2)
	for (i = 0; i < N; i++) {
#pragma omp atomic
		count++;
#pragma omp atomic
		weight += 0.5L;
	}
	return count != N || weight != N / 2;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: shared sums updated inside critical, one unnamed and one
 * named.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define N 1000

static long total, named_total;

static SITE void add(long *sum, long v)
{
	*sum += v;
}

int main(void)
{
	int i;

#pragma omp parallel for num_threads(2)
	for (i = 0; i < N; i++) {
#pragma omp critical
		add(&total, i);
#pragma omp critical(named)
		add(&named_total, i);
	}
	return total != named_total;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a sum computed with reduction(+), then read after the loop.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define N 2048

static int v[N];
static long total;

static SITE int value(int i)
{
	return v[i];
}

int main(void)
{
	long sum = 0;
	int i;

	for (i = 0; i < N; i++)
		v[i] = i;
#pragma omp parallel for num_threads(2) reduction(+:sum)
	for (i = 0; i < N; i++)
		sum += value(i);
	total = sum;
	return total != (long)N * (N - 1) / 2;
}

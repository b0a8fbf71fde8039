// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a parallel for whose index is private and whose iterations
 * touch only their own elements.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define N 2048

static int a[N], b[N];

static SITE void scale(int i)
{
	b[i] = a[i] * 2;
}

int main(void)
{
	int i;

	for (i = 0; i < N; i++)
		a[i] = i;
#pragma omp parallel for num_threads(2) private(i)
	for (i = 0; i < N; i++)
		scale(i);
	return b[N - 1] != 2 * (N - 1);
}

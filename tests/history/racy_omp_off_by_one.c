// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: an off-by-one parallel for, a[i + 1] = a[i].
 *
 * With two threads and a static schedule, the first thread writes
 * a[N / 2] in its last iteration and the second reads it in its first: one
 * racing pair, at the boundary of the two chunks.
 *
 * Expected: "data-race in shift / shift"
 */
#include <omp.h>
#include "suite.h"

#define N 2048

static int a[N + 1];

static SITE void shift(int *v, int i)
{
	v[i + 1] = v[i];
}

int main(void)
{
	int i;

	for (i = 0; i <= N; i++)
		a[i] = i;
#pragma omp parallel for num_threads(2) schedule(static)
	for (i = 0; i < N; i++)
		shift(a, i);
	return a[N] < 0;
}

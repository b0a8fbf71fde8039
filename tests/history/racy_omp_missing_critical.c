// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a shared sum updated without critical.
 *
 * Each of two threads adds its partial sum to the total once, with a plain
 * read-modify-write and no critical section around it.
 *
 * Expected: "data-race in add_to_total / add_to_total"
 */
#include <omp.h>
#include "suite.h"

#define N 4096

static long total;
static int v[N];

static SITE void add_to_total(long part)
{
	total += part;
}

int main(void)
{
	int i;

	for (i = 0; i < N; i++)
		v[i] = i;
#pragma omp parallel num_threads(2)
	{
		long part = 0;
		int j;

#pragma omp for schedule(static)
		for (j = 0; j < N; j++)
			part += v[j];
		add_to_total(part);
	}
	printf("%ld\n", total);
	return 0;
}

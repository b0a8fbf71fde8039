// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: nowait on a loop followed by a loop that depends on it.
 *
 * Both loops have the same static schedule, so an iteration's own a[i] is
 * written and read by one thread, which is what makes nowait look safe.
 * But the second loop also reads a[i + 1]: at the boundary between the two
 * threads' chunks, that element was written by the other thread, and
 * nowait removed the barrier that ordered it.  One racing pair.
 *
 * Expected: "data-race in fill / smooth"
 */
#include <omp.h>
#include "suite.h"

#define N 2048

static int a[N + 1], b[N];

static SITE void fill(int i)
{
	a[i] = i * 3;
}

static SITE void smooth(int i)
{
	b[i] = a[i] + a[i + 1];
}

int main(void)
{
	int i;

#pragma omp parallel num_threads(2)
	{
#pragma omp for schedule(static) nowait
		for (i = 0; i < N; i++)
			fill(i);
#pragma omp for schedule(static)
		for (i = 0; i < N - 1; i++)
			smooth(i);
	}
	return b[0] < 0;
}

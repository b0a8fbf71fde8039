// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: reduction variables set and read by one thread where a
 * barrier or the team's end orders them with every combine.  A `single`
 * (which ends in a barrier) resets a total before the loop that reduces
 * into it; a double is reduced too, which gcc combines with a `lock
 * cmpxchg` loop whose first read is a plain mov on the pragma's line;
 * `main` reads each after its team ended.  (A team whose outlined
 * function begins with its combine, DRB076's, is left out: no uprobe goes
 * on that locked first instruction, so nothing orders the function's
 * accesses with the team's spawn and end, a false report whenever its
 * stack slot is reused by a named local: docs/history.md.)
 *
 * A combine's relaxed order (from the source) lets a plain store made
 * before it pair with it: these must still not.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define N 64
#define ROUNDS 20

static SITE void reset_total(long *total)
{
	*total = 0;
}

static SITE long reduce_long(void)
{
	long total = 1;
	int i;

#pragma omp parallel num_threads(2)
	{
#pragma omp single
		reset_total(&total);
#pragma omp for reduction(+ : total)
		for (i = 0; i < N; i++)
			total += i;
	}
	return total;
}

static SITE double reduce_double(void)
{
	double total = 0;
	int i;

#pragma omp parallel for num_threads(2) reduction(+ : total)
	for (i = 0; i < N; i++)
		total += i * 0.5;
	return total;
}

int main(void)
{
	long bad = 0;
	int r;

	for (r = 0; r < ROUNDS; r++) {
		bad += reduce_long() != N * (N - 1) / 2;
		bad += reduce_double() != N * (N - 1) / 4.0;
	}
	return bad != 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a reduction variable set in a `master` construct, which has no
 * barrier, right before the loop that reduces into it.  The other
 * thread's combine (a relaxed `lock add` on the pragma's line) is
 * ordered with nothing the master did before the loop's barrier, so it
 * races with the plain store (DataRaceBench's DRB140 shape).
 *
 * The store comes before any combine here: the other thread starts its
 * part 20 ms late.  A detector that takes every lock-prefixed access to
 * teach that its address holds an atomic, and a plain store made before
 * the teaching for the atomic's own, misses it: with debug info, the
 * source says that combine is relaxed, and the store a plain one.
 *
 * Expected: data-race in reset_total / sum_parts._omp_fn.0
 */
#include <omp.h>
#include "suite.h"

#define N 64

static SITE void reset_total(long *total)
{
	*total = 0;
}

static SITE long sum_parts(void)
{
	long total = 1;
	int i;

#pragma omp parallel num_threads(2)
	{
#pragma omp master
		reset_total(&total);
		if (omp_get_thread_num() == 1)
			spin_us(20000);
#pragma omp for reduction(+ : total)
		for (i = 0; i < N; i++)
			total += i;
	}
	return total;
}

int main(void)
{
	return sum_parts() != N * (N - 1) / 2;
}

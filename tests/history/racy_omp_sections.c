// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: two sections of one construct write the same variable.  Nothing
 * orders the sections of a construct, so the writes race whichever
 * threads run them and in whatever order.  Here one thread runs both,
 * one after the other, in most runs: the other comes late, and the
 * first takes every section left.  A detector that gives a thread one
 * clock for all it runs takes that for program order, and misses it.
 *
 * Expected: data-race in store_first / store_second
 */
#include <omp.h>
#include "suite.h"

static long last;

static SITE void store_first(void)
{
	last = 1;
}

static SITE void store_second(void)
{
	last = 2;
}

int main(void)
{
#pragma omp parallel num_threads(2)
	{
		if (omp_get_thread_num() == 1)
			spin_us(20000);
#pragma omp sections
		{
#pragma omp section
			store_first();
#pragma omp section
			store_second();
		}
	}
	return last == 0;
}

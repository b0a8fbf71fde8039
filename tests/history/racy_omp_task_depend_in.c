// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: two tasks that both depend(in:) on the producer's item are each
 * ordered after the producer, and not after each other: an in dependence
 * orders a task after the earlier out and inout tasks on the address, not
 * after the earlier in tasks.  Both add to a tally they do not name in a
 * depend clause, so their adds race.  A detector that starts every task
 * after all the finished ones, or keeps one object per address for every
 * kind of dependence, orders them.
 *
 * Expected: data-race in tally / tally
 */
#include <omp.h>
#include "suite.h"

static long item, total;

static SITE void produce(long v)
{
	item = v;
}

static SITE void tally(void)
{
	total += item;
}

int main(void)
{
#pragma omp parallel num_threads(2)
#pragma omp single
	{
#pragma omp task depend(out: item)
		produce(21);
#pragma omp task depend(in: item)
		tally();
#pragma omp task depend(in: item)
		tally();
	}
	return total == 0;
}

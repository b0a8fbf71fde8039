// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: two sibling tasks, no depend clause between them, write the same
 * variable.  Nothing orders two tasks of one parent but depend, taskwait,
 * taskgroup or a barrier, so the writes race whichever threads run them,
 * and whatever order they happen to run in: often on one thread, one
 * after the other, which a detector that gives a thread one clock for all
 * the tasks it runs takes for program order.
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
#pragma omp single
	{
#pragma omp task
		store_first();
#pragma omp task
		store_second();
	}
	return last == 0;
}

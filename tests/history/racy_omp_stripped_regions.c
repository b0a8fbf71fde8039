// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: the twin of free_omp_stripped_regions, its outlined function's
 * symbol removed too (",nofnsym"): the region found by the call that runs
 * it orders the master's fill before it and the region before the sum, but
 * not the two threads inside it.  Thread 0 publishes a value that thread 1
 * reads with no barrier between: one racing pair, which the region's
 * probes must not order away.
 *
 * Expected: "data-race in peek / publish"
 */
#include <omp.h>
#include "suite.h"

static int shared_v, seen;

static SITE void publish(int v)
{
	shared_v = v;
}

static SITE void peek(void)
{
	seen = shared_v;
}

int main(void)
{
#pragma omp parallel num_threads(2)
	{
		if (omp_get_thread_num() == 0)
			publish(42);
		else
			peek();
	}
	printf("%d\n", seen >= 0);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: DataRaceBench's DRB183 in small.  A flag that one section sets with
 * a plain `ready = 1;` and the other polls with `#pragma omp atomic read`:
 * the poll is an atomic access, the store is not, and OpenMP says the pair
 * races.  Both reach the flag, main's local, through the region's data
 * block, so gcc -O1 reloads its pointer each time round: the spin-wait
 * rule (sites/spinwait.c) takes the poll for an acquire and teaches the
 * flag's address, and its plain store was then taken for the release
 * (missed, 2 of 2 on main's build of 7 December, sync15).  With -g, a store
 * whose line is a plain assignment naming nothing atomic is left plain
 * (docs/marking.md), whatever object it reaches.  Built with -g: without
 * debug info the store is an atomic's as far as anyone can tell
 * (free_omp_poll_pointer, ",nog", stays silent).
 *
 * Expected: data-race in main._omp_fn.0 / main._omp_fn.0
 */
#include <omp.h>
#include "suite.h"

int main(void)
{
	int ready = 0, polls = 0;

#pragma omp parallel num_threads(2) shared(ready, polls)
	{
		if (omp_get_thread_num() == 0) {
			spin_us(2000);	/* the poll runs first, as it usually does */
			ready = 1;
		} else {
			int seen = 0;

			while (!seen) {
#pragma omp atomic read
				seen = ready;
			}
			polls = 1;
		}
	}
	printf("%d\n", polls);
	return polls != 1;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: the two teams of a `target teams` league write the same variable.
 * The teams of a league are concurrent, with no way to synchronize with
 * each other.  With no offload device the target runs on the host, and
 * libgomp runs the teams one after the other on the thread that met the
 * construct (GOMP_teams4): a detector that gives the thread one clock for
 * all it runs takes that for program order, and misses it.
 *
 * Expected: data-race in store_first / store_second
 */
#include <omp.h>
#include "suite.h"

static long last;

#pragma omp declare target
static SITE void store_first(void)
{
	last = 1;
}

static SITE void store_second(void)
{
	last = 2;
}
#pragma omp end declare target

int main(void)
{
#pragma omp target teams num_teams(2) map(tofrom: last)
	{
		if (omp_get_team_num() == 0)
			store_first();
		else
			store_second();
	}
	return last == 0;
}

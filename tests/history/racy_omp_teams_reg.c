// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: the two teams of a host `teams` construct (OpenMP 5, no target:
 * GOMP_teams_reg) write the same variable.  The teams of a league are
 * concurrent, with no way to synchronize with each other; libgomp runs
 * them one after the other on the thread that met the construct, so a
 * detector that gives the thread one clock for all it runs takes that for
 * program order, and misses it (racy_omp_teams.c is the `target teams`
 * form).
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
#pragma omp teams num_teams(2)
	{
		if (omp_get_team_num() == 0)
			store_first();
		else
			store_second();
	}
	return last == 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a host `teams` construct (OpenMP 5, no target), which gcc
 * lowers to GOMP_teams_reg(fn, ...): libgomp calls fn once per team, one
 * after the other on the thread that met it.  Each team fills its own
 * half of the slots with a `parallel for` of its own and keeps its sum in
 * a local of fn's frame, which every team's call reuses (each team's own
 * variable, not shared); the construct's end orders all teams before main
 * reads the slots, and a second construct comes after the first.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define TEAMS 2
#define PER_TEAM 64

static long slot[TEAMS * PER_TEAM];
static long team_sum[TEAMS];

static SITE void fill_slot(int i, long v)
{
	slot[i] = v;
}

static SITE long read_slot(int i)
{
	return slot[i];
}

static void league(long v)
{
#pragma omp teams num_teams(TEAMS)
	{
		int t = omp_get_team_num();
		long sum = 0;

#pragma omp parallel for num_threads(2)
		for (int i = t * PER_TEAM; i < (t + 1) * PER_TEAM; i++)
			fill_slot(i, v + read_slot(i));
#pragma omp parallel for num_threads(2) reduction(+: sum)
		for (int i = t * PER_TEAM; i < (t + 1) * PER_TEAM; i++)
			sum += read_slot(i);
		team_sum[t] = sum;
	}
}

int main(void)
{
	long total = 0;

	league(1);
	league(2);
	for (int t = 0; t < TEAMS; t++)
		total += team_sum[t];
	for (int i = 0; i < TEAMS * PER_TEAM; i++)
		total -= read_slot(i);
	return total != 0 || read_slot(0) != 3;
}

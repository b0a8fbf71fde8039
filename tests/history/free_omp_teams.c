// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a `target teams` league (run on the host: one thread runs
 * the teams one after the other) in which each team fills its own slots
 * with a `parallel for` of its own and sums them with a reduction.  The
 * teams share the target function's frame, where each keeps its private
 * variables and the data block it hands its `parallel`: those are each
 * team's own, not shared between teams.  The league's end orders the
 * teams before main reads the slots, and a second league after the first
 * comes after all of it.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define TEAMS 4
#define PER_TEAM 64

static long slot[TEAMS * PER_TEAM];
static long team_sum[TEAMS];

#pragma omp declare target
static SITE void fill_slot(int i, long v)
{
	slot[i] = v;
}

static SITE long read_slot(int i)
{
	return slot[i];
}
#pragma omp end declare target

static void league(long v)
{
#pragma omp target teams num_teams(TEAMS) map(tofrom: slot, team_sum)
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

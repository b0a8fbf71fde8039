// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: between the same two barriers, each of two threads writes the
 * same variable.  Only barriers order the threads of a team, and both
 * writes lie between the same two, so they race.
 *
 * The two threads share one CPU here, so one of them runs from the first
 * barrier to the second before the other has returned from the first.
 * A detector with one sync object for every barrier lets that late
 * thread acquire what the other released entering the second barrier,
 * its write included, and misses the race (DataRaceBench's DRB187 has
 * this shape, with lock calls between its barriers).
 *
 * Expected: data-race in put_early / put_late
 */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include "suite.h"

static long shared_x;

static SITE void put_early(void)
{
	shared_x = 1;
}

static SITE void put_late(void)
{
	shared_x = 2;
}

int main(void)
{
	cpu_set_t one;

	/* Before the team exists: libgomp's threads inherit the mask. */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
#pragma omp parallel num_threads(2)
	{
#pragma omp barrier
		if (omp_get_thread_num() == 0)
			put_early();
		else
			put_late();
#pragma omp barrier
	}
	return shared_x == 0;
}

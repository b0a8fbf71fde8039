// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a `target teams distribute` league (run on the host: one
 * thread runs the teams one after the other) whose teams share out chunks
 * of slots; each chunk is filled by a `parallel for` of the team's own
 * and summed with a reduction.  The teams share the target function's
 * frame, where each keeps its private variables and the data block it
 * hands its `parallel`: those are each team's own, not shared between
 * teams (on a device, each team has its copy).  The league's end orders
 * the teams before main reads the slots, and a second league after the
 * first comes after all of it.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define TEAMS 4
#define CHUNKS 8
#define PER_CHUNK 32

static long slot[CHUNKS * PER_CHUNK];
static long chunk_sum[CHUNKS];

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
#pragma omp target teams distribute num_teams(TEAMS) map(tofrom: slot, chunk_sum)
	for (int c = 0; c < CHUNKS; c++) {
		long sum = 0;

#pragma omp parallel for num_threads(2)
		for (int i = c * PER_CHUNK; i < (c + 1) * PER_CHUNK; i++)
			fill_slot(i, v + read_slot(i));
#pragma omp parallel for num_threads(2) reduction(+: sum)
		for (int i = c * PER_CHUNK; i < (c + 1) * PER_CHUNK; i++)
			sum += read_slot(i);
		chunk_sum[c] = sum;
	}
}

int main(void)
{
	long total = 0;

	league(1);
	league(2);
	for (int c = 0; c < CHUNKS; c++)
		total += chunk_sum[c];
	for (int i = 0; i < CHUNKS * PER_CHUNK; i++)
		total -= read_slot(i);
	return total != 0 || read_slot(0) != 3;
}

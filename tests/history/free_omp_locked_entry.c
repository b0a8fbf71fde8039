// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a team whose outlined function starts with its `omp atomic`
 * (a `lock add`, the function's first instruction), which uprobes refuse:
 * the function's entry (the team's start, acquired) and its return (the
 * thread's end of the team, released) went unprobed, so a value the
 * master wrote before the team and a worker read in it, and a value a
 * worker wrote in it and the master read after it, were reported.  The
 * first team starts the pool's threads (pthread_create orders everything
 * before it), so the second team's workers exist before the master writes:
 * only the team's own start and end order these accesses.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

static int hits;
static long input, output[2];

static SITE void put_input(long v)
{
	input = v;
}

static SITE long get_input(void)
{
	return input;
}

static SITE void put_output(int i, long v)
{
	output[i & 1] = v;
}

static SITE long get_output(int i)
{
	return output[i & 1];
}

/* A call of its own, so that the outlined function is the atomic and a jump here. */
static SITE void step(void)
{
	put_output(omp_get_thread_num(), get_input());
}

int main(void)
{
	long sum = 0;

#pragma omp parallel num_threads(2)
	put_output(omp_get_thread_num(), 0);
	for (int round = 0; round < 20; round++) {
		put_input(round);
		/* Its outlined function (-O2): lock addl $1, hits(%rip); jmp step. */
#pragma omp parallel num_threads(2)
		{
#pragma omp atomic
			hits++;
			step();
		}
		sum += get_output(0) + get_output(1);
	}
	return hits != 40 || sum != 2 * 19 * 20 / 2;
}

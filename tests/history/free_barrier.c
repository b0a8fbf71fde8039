// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: phases separated by pthread_barrier_wait.  In each phase a
 * thread writes its own cell, then, past the barrier, reads the other's,
 * then waits again before the next write.
 *
 * Expected: race-free
 */
#include "suite.h"

#define PHASES 200

static pthread_barrier_t bar;
static long cell[2];

static SITE void publish(int me, long v)
{
	cell[me] = v;
}

static SITE long look(int other)
{
	return cell[other];
}

static void *worker(void *arg)
{
	int me = (int)(long)arg;
	long i, sum = 0;

	for (i = 0; i < PHASES; i++) {
		publish(me, i);
		pthread_barrier_wait(&bar);
		sum += look(!me);
		pthread_barrier_wait(&bar);
	}
	return (void *)sum;
}

int main(void)
{
	pthread_barrier_init(&bar, NULL, 2);
	run_pair(worker, (void *)0L, worker, (void *)1L);
	return 0;
}

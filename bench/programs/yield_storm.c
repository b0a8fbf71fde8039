// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench/yield_storm: a program whose threads switch all the time and touch
 * memory seldom, the shape the history's watches cost most on
 * (docs/history.md, "Watches of reads": a thread with a user breakpoint
 * armed pays at each context switch).  THREADS threads, one more than the
 * two CPUs of this project's machines, each call sched_yield() ROUNDS
 * times from a loop that keeps its count in a register, so nearly every
 * call switches and no probed access runs in between.  Before that, each
 * reads a table nobody wrote, set-up data of the kind a watch is offered
 * for (a read of a granule the history saw no write of), so that a watch
 * is armed in the other threads while they switch.
 *
 *   yield_storm [ROUNDS [THREADS]]      (defaults 200,000 and 3)
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS	16

static long table[64];

static __attribute__((noinline)) long read_table(long from)
{
	long sum = 0;

	for (long i = from % 8; i < 64; i += 8)
		sum += table[i];
	return sum;
}

static void *storm(void *arg)
{
	long rounds = (long)arg, sum = read_table((long)pthread_self() >> 12);

	for (long i = 0; i < rounds; i++)
		sched_yield();
	return (void *)sum;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200000, sum = 0;
	int n = argc > 2 ? atoi(argv[2]) : 3;
	pthread_t t[MAX_THREADS];
	void *r;

	if (n < 1 || n > MAX_THREADS)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, storm, (void *)rounds))
			return 1;
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], &r);
		sum += (long)r;
	}
	printf("%d threads, %ld yields each, table sum %ld\n", n, rounds, sum);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: more threads than the history has clock slots (64), one at a
 * time, each created after the previous one was joined, each adding to a
 * plain total.  A slot a joined thread left is taken again; no thread may
 * be left without a clock, and nothing is reported.
 *
 * Expected: race-free
 */
#include <pthread.h>

#define SITE __attribute__((noinline, noipa))
#define THREADS 100

static long total;

static SITE void add(long v)
{
	total += v;
}

static void *worker(void *arg)
{
	add((long)arg);
	return NULL;
}

int main(void)
{
	for (long i = 0; i < THREADS; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, (void *)i))
			return 2;
		pthread_join(t, NULL);
	}
	add(-1);
	return total != THREADS * (THREADS - 1) / 2 - 1;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a program that has created more threads than the history has
 * clock slots (64) before the race: 100 short-lived threads, created in
 * waves and joined only at the end.  Then two more threads each store to
 * one word once, a millisecond apart, with nothing between them.
 *
 * Expected: "data-race in store_left / store_right"
 */
#include "suite.h"

#define THREADS	100
#define WAVE	25

static long total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t wave_done;

SUITE_WRITE_WRITE_PAIR()

static void *worker(void *arg)
{
	pthread_mutex_lock(&lock);
	total += (long)arg;
	pthread_mutex_unlock(&lock);
	pthread_barrier_wait(&wave_done);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];

	start_waves(t, THREADS, WAVE, worker, &wave_done);
	run_pair(left, NULL, right, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return mode == 0 || total != THREADS * (THREADS - 1) / 2;
}

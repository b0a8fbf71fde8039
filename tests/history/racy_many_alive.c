// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy, with 120 threads alive at once, past the history's 64 clock
 * slots.  All wait at a barrier until every one exists; then two of them
 * each store to one word once, a millisecond apart, with nothing between
 * them, while the others add to a total under a mutex; a second barrier
 * ends it.  Here the racing pair are the first two threads created, each
 * in a slot of its own, the 56 threads past the slots sharing the others'
 * (racy_many_alive_late.c: the pair created last, each in a shared slot).
 * Before 2026-12-07 the threads past 64 had no clock and the report was
 * dropped.
 *
 * Expected: "data-race in store_left / store_right"
 */
#include "suite.h"

#define THREADS	120
#ifndef LEFT
#define LEFT	0	/* the racing pair: threads LEFT and RIGHT of THREADS */
#define RIGHT	1
#endif

static long total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t all_in, all_done;

SUITE_WRITE_WRITE_PAIR()

static void *worker(void *arg)
{
	long me = (long)arg;

	pthread_barrier_wait(&all_in);
	if (me == LEFT) {
		left(NULL);
	} else if (me == RIGHT) {
		right(NULL);
	} else {
		pthread_mutex_lock(&lock);
		total += me;
		pthread_mutex_unlock(&lock);
	}
	pthread_barrier_wait(&all_done);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];

	pthread_barrier_init(&all_in, NULL, THREADS);
	pthread_barrier_init(&all_done, NULL, THREADS);
	for (long i = 0; i < THREADS; i++)
		start_thread(&t[i], worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return mode == 0;
}

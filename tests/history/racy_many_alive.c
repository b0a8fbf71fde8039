// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy, with 120 threads alive at once, past the history's 64 clock
 * slots.  All wait at a barrier until every one exists; then two of them
 * each store to one word once, a millisecond apart, with nothing between
 * them, while the others add to a total under a mutex; a second barrier
 * ends it.  Here the racing pair are the first two threads created: the
 * 57 threads past the 64 slots, created while the pair waits at the
 * barrier, join the slots with the fewest threads from the first on
 * (hb_share_slot), the pair's among them.  A sharer's epochs are above the
 * pair's, and it releases them into the barrier the pair's other side
 * acquires: without its access stamped with the slot's clock
 * (hb_slot_catch_up), the left store was taken as ordered before the
 * right, 0 reports in 4 runs.  racy_many_alive_own.c: a pair in slots
 * nobody shares; racy_many_alive_late.c: the pair created last, each
 * sharing a slot.  Before 2026-12-07 the threads past 64 had no clock and
 * the report was dropped.
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

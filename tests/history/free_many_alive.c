// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free, with 120 threads alive at once, past the history's 64 clock
 * slots: the threads created after the 63rd share a slot with a live one
 * (bpf/history_clock.bpf.h, hb_share_slot).  All of them run ROUNDS
 * rounds in step, a barrier between rounds: each adds to a plain total
 * under a mutex, and one thread a round, a different one each time, writes
 * a plain value that the next thread reads after the next barrier.  Then
 * the main thread joins them all and reads the total.
 *
 * What it checks: a shared slot's threads take epochs from one clock,
 * so that the orders of the mutex and the barriers keep holding between
 * any two threads, sharers or not, and nothing is reported; before
 * 2026-12-07 the threads past 64 had no clock and every report of the
 * run would have been dropped.
 *
 * Expected: race-free; its positive control: threads shared slots.
 */
#include "suite.h"

#define THREADS	120
#define ROUNDS	40

static long total, baton;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t step;
static int rounds;

static SITE void add(long v)
{
	total += v;
}

static SITE void pass_baton(long v)
{
	baton = v;
}

static SITE long take_baton(void)
{
	return baton;
}

static void *worker(void *arg)
{
	long me = (long)arg, bad = 0;

	for (int r = 0; r < rounds; r++) {
		pthread_mutex_lock(&lock);
		add(me);
		pthread_mutex_unlock(&lock);
		/* Written by thread r % THREADS before the barrier, read by the next one after it. */
		if (me == r % THREADS)
			pass_baton(r);
		pthread_barrier_wait(&step);
		if (me == (r + 1) % THREADS && take_baton() != r)
			bad = 1;
		pthread_barrier_wait(&step);
	}
	return (void *)bad;
}

int main(void)
{
	pthread_t t[THREADS];
	long bad = 0;

	rounds = suite_rounds(ROUNDS);
	pthread_barrier_init(&step, NULL, THREADS);
	for (long i = 0; i < THREADS; i++)
		start_thread(&t[i], worker, (void *)i);
	for (int i = 0; i < THREADS; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		bad |= (long)ret;
	}
	return bad || total != (long)rounds * THREADS * (THREADS - 1) / 2;
}

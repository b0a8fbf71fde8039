// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: 100 short-lived threads, as a program that starts a thread
 * per request makes them.  Each adds to a plain total under a mutex and
 * ends; the main thread creates them in waves of 25 and joins them only
 * at the end, so more than 64 threads are created and not yet joined,
 * though no more than 25 are alive at once (a wave's threads end
 * before the next wave starts).  Then the main thread reads
 * the total: every thread was joined.
 *
 * Expected: race-free
 */
#include "suite.h"

#define THREADS	100
#define WAVE	25

static long total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t wave_done;

static SITE void add(long v)
{
	total += v;
}

static SITE long read_total(void)
{
	return total;
}

static void *worker(void *arg)
{
	pthread_mutex_lock(&lock);
	add((long)arg);
	pthread_mutex_unlock(&lock);
	pthread_barrier_wait(&wave_done);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];

	start_waves(t, THREADS, WAVE, worker, &wave_done);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return read_total() != THREADS * (THREADS - 1) / 2;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a sense-reversing barrier of the program's own, as numeric
 * codes write one, built -O2 without -g.  Each thread counts itself in
 * with a locked decrement; the last one resets the count and flips the
 * shared sense with a release store, the others spin on an acquire load
 * of the sense until it flips.  Between barriers each thread writes its
 * own slot of a plain array and reads its neighbour's, written before the
 * last barrier.
 *
 * Expected: race-free
 */
#include <sched.h>
#include <stdatomic.h>
#include "suite.h"

#define THREADS 2
#define ROUNDS 100

static atomic_int left = THREADS, sense;
static long cells[THREADS];
static long sums[THREADS];

static void barrier(int *local)
{
	*local = !*local;
	if (atomic_fetch_sub(&left, 1) == 1) {
		atomic_store_explicit(&left, THREADS, memory_order_relaxed);
		atomic_store_explicit(&sense, *local, memory_order_release);
		return;
	}
	while (atomic_load_explicit(&sense, memory_order_acquire) != *local)
		sched_yield();
}

static SITE void put(int me, long v)
{
	cells[me] = v;
}

static SITE long get(int other)
{
	return cells[other];
}

static void *run(void *arg)
{
	int me = (int)(long)arg, local = 0;
	long sum = 0;

	for (long r = 0; r < ROUNDS; r++) {
		put(me, r + me);
		barrier(&local);
		sum += get((me + 1) % THREADS);
		barrier(&local);
	}
	sums[me] = sum;
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	long want = 0;

	for (long i = 0; i < THREADS; i++)
		start_thread(&t[i], run, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < THREADS; i++) {
		want = (long)ROUNDS * (ROUNDS - 1) / 2 + (long)ROUNDS * ((i + 1) % THREADS);
		if (sums[i] != want) {
			fprintf(stderr, "the barrier let a thread through early\n");
			return 1;
		}
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a counter under a spinlock written by hand, taken with a
 * lock cmpxchg and let go with an xchg: marked accesses, the only
 * synchronization between the threads.  It runs for seconds, long past
 * the sampler's cold start, with the lock and the counter equally hot, so
 * the sampler would arm and disarm both sites in turns.  Were the lock's
 * sites disarmed while the counter's is armed, the history would miss the
 * acquire and release and report the counter; sync sites stay armed
 * while the history's sync probes are on.
 *
 * Expected: race-free
 */
#include "suite.h"

#define ROUNDS 40000

static int lock;
SUITE_COUNTER(counter, bump)

static SITE void take(void)
{
	int free = 0;

	while (!__atomic_compare_exchange_n(&lock, &free, 1, 0, __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED))
		free = 0;
}

static SITE void let_go(void)
{
	__atomic_exchange_n(&lock, 0, __ATOMIC_RELEASE);
}

static void *worker(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		take();
		bump();
		let_go();
		spin_us(50);
	}
	return NULL;
}

int main(void)
{
	run_pair(worker, NULL, worker, NULL);
	return counter != 2 * ROUNDS;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a counter under a spinlock built on gcc's legacy builtins.
 * __sync_lock_test_and_set is an xchg (acquire); __sync_lock_release is a
 * plain mov of 0 (a release on x86): nothing in the binary but the xchg on
 * the same address says that the mov is atomic, and without -g nothing at
 * all.  Two threads take the lock 100,000 times each, long enough to leave
 * the site sampler's cold start.
 *
 * Expected: race-free
 */
#include "suite.h"

#define ROUNDS 100000

static int lock;
SUITE_COUNTER(counter, bump)

static void *worker(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		while (__sync_lock_test_and_set(&lock, 1))
			while (*(volatile int *)&lock)
				;
		bump();
		__sync_lock_release(&lock);
	}
	return NULL;
}

int main(void)
{
	run_pair(worker, NULL, worker, NULL);
	return counter != 2L * ROUNDS;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a counter under a spinlock written by hand with a C11
 * atomic_flag.  test_and_set is an xchg and clear a store to an _Atomic
 * object: marked accesses, which the history takes as acquire and release
 * on their address; no library call orders the threads.
 *
 * Expected: race-free
 */
#include <stdatomic.h>
#include "suite.h"

#define ROUNDS 300

static atomic_flag lock = ATOMIC_FLAG_INIT;
SUITE_COUNTER(counter, bump)

static void *worker(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
			;
		bump();
		atomic_flag_clear_explicit(&lock, memory_order_release);
	}
	return NULL;
}

int main(void)
{
	run_pair(worker, NULL, worker, NULL);
	return counter != 2 * ROUNDS;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a counter that two threads increment under a pthread spinlock.
 *
 * Expected: race-free
 */
#include "suite.h"

#define ROUNDS 500

static pthread_spinlock_t lock;
SUITE_COUNTER(counter, bump)

static void *worker(void *arg)
{
	int i;

	for (i = 0; i < ROUNDS; i++) {
		pthread_spin_lock(&lock);
		bump();
		pthread_spin_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE);
	run_pair(worker, NULL, worker, NULL);
	printf("%ld\n", counter);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a counter that two threads increment under a pthread mutex.
 *
 * Expected: race-free
 */
#include "suite.h"

#define ROUNDS 500

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
SUITE_COUNTER(counter, bump)

static void *worker(void *arg)
{
	int i;

	for (i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock);
		bump();
		pthread_mutex_unlock(&lock);
		if (pthread_mutex_trylock(&lock) == 0) {
			bump();
			pthread_mutex_unlock(&lock);
		}
	}
	return NULL;
}

int main(void)
{
	run_pair(worker, NULL, worker, NULL);
	printf("%ld\n", counter);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: two threads take one mutex millions of times, each adding to
 * a plain counter under it, and a third hands a plain value to them under
 * the same mutex now and then.  A trap on every lock and unlock costs far
 * more than the budget, so the history's sync probes are taken off and put
 * back many times during the run (history/pace.c): threads are blocked in
 * pthread_mutex_lock() across a pause, their entry unseen and their return
 * seen, and the history must stay silent across each pause.  The test also
 * asserts that the probes were taken off at least once.
 *
 * Expected: race-free
 */
#include <stdlib.h>
#include "suite.h"

#define ROUNDS 10000000

SUITE_LOCKED_COUNTER()

static void *worker(void *arg)
{
	long sum = 0;

	for (long i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock);
		bump();
		if (!(i & 1023))
			sum += take();
		pthread_mutex_unlock(&lock);
	}
	return (void *)sum;
}

static void *passer(void *arg)
{
	for (long i = 0; i < ROUNDS / 1024; i++) {
		pthread_mutex_lock(&lock);
		pass(i);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[3];

	if (pthread_create(&t[0], NULL, worker, NULL) || pthread_create(&t[1], NULL, worker, NULL) ||
	    pthread_create(&t[2], NULL, passer, NULL))
		return 2;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", counter);
	return counter != 2L * ROUNDS;
}

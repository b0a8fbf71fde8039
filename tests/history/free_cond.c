// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a one-slot mailbox handed over with a condition variable and
 * its mutex.  The producer writes the slot, the consumer reads it; each
 * waits on the condition, under the mutex, for its turn.
 *
 * Expected: race-free
 */
#include "suite.h"

#define ROUNDS 200

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int full;
SUITE_SHARED(long, slot, put, take)

static void *producer(void *arg)
{
	long i;

	for (i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock);
		while (full)
			pthread_cond_wait(&changed, &lock);
		put(i);
		full = 1;
		pthread_cond_signal(&changed);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long i, sum = 0;

	for (i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock);
		while (!full)
			pthread_cond_wait(&changed, &lock);
		sum += take();
		full = 0;
		pthread_cond_broadcast(&changed);
		pthread_mutex_unlock(&lock);
	}
	return (void *)sum;
}

int main(void)
{
	run_pair(producer, NULL, consumer, NULL);
	return 0;
}

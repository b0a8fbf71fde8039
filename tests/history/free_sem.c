// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a one-slot mailbox handed back and forth with two POSIX
 * semaphores (sem_post / sem_wait, and sem_trywait while polling).
 *
 * Expected: race-free
 */
#include <semaphore.h>
#include <sched.h>
#include "suite.h"

#define ROUNDS 200

static sem_t empty, full;
static long slot;

static SITE void put(long v)
{
	slot = v;
}

static SITE long take(void)
{
	return slot;
}

static void *producer(void *arg)
{
	long i;

	for (i = 0; i < ROUNDS; i++) {
		sem_wait(&empty);
		put(i);
		sem_post(&full);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long i, sum = 0;

	for (i = 0; i < ROUNDS; i++) {
		while (sem_trywait(&full))
			sched_yield();
		sum += take();
		sem_post(&empty);
	}
	return (void *)sum;
}

int main(void)
{
	pthread_t a, b;

	sem_init(&empty, 0, 1);
	sem_init(&full, 0, 0);
	start_thread(&a, producer, NULL);
	start_thread(&b, consumer, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}

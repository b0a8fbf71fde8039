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
SUITE_SHARED(long, slot, put, take)

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
	sem_init(&empty, 0, 1);
	sem_init(&full, 0, 0);
	run_pair(producer, NULL, consumer, NULL);
	return 0;
}

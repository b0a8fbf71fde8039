// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a flag waited for with a semaphore's wait in its loop.
 *
 * The waiter loops `while (!load(&done)) sem_wait(&s);`, an acquire load
 * of a C11 atomic; the publisher fills the data, stores done with release
 * and posts s.  Built at -O2 without debug info, both sides of done are
 * plain movs.  The loop's last call is sem_wait(), which returns holding
 * a unit of the semaphore, not a lock that protects done: taken as a
 * lock's (the polled-under-a-lock rule), done's load would stay plain and
 * its first read, before any post, would pair with the publisher's store.
 * The history's table says a semaphore's wait returns holding no lock,
 * so the load is a spin-wait's acquire (-v "N spin-wait reads", the
 * positive control) and done's store a learned release.
 *
 * Expected: none
 */
#include <semaphore.h>
#include <stdatomic.h>

#include "suite.h"

static sem_t s;
static atomic_int done;
static long data[8];

static SITE void publish(void)
{
	for (int i = 0; i < 8; i++)
		data[i] = i + 1;
	atomic_store_explicit(&done, 1, memory_order_release);
	sem_post(&s);
}

static SITE long wait_and_sum(void)
{
	long sum = 0;

	while (!atomic_load_explicit(&done, memory_order_acquire))
		sem_wait(&s);
	for (int i = 0; i < 8; i++)
		sum += data[i];
	return sum;
}

/* A millisecond late, so that the waiter reads done before it is set. */
static void *publisher(void *arg)
{
	spin_us(1000);
	publish();
	return NULL;
}

static long total;

static void *waiter(void *arg)
{
	total = wait_and_sum();
	return NULL;
}

int main(void)
{
	sem_init(&s, 0, 0);
	run_pair(waiter, NULL, publisher, NULL);
	return total != 36;
}

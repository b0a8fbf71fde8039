// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: more mutexes than the history's sync object map holds
 * (65,536), each guarding its own slot, which a writer thread fills under
 * the lock and a reader thread reads under it.  Once the map is full, a
 * release has no object of its own: it goes into the process's overflow
 * object, which every acquire of an unknown object acquires.  Before,
 * those releases were lost (counted only), and the reads of the last
 * slots were reported as races.
 *
 * Expected: race-free
 */
#include "suite.h"

#define LOCKS	70000

static pthread_mutex_t *locks;
static long *slots;

static SITE void put(long i)
{
	slots[i] = i;
}

static SITE long get(long i)
{
	return slots[i];
}

static void *writer(void *arg)
{
	for (long i = 0; i < LOCKS; i++) {
		pthread_mutex_lock(&locks[i]);
		put(i);
		pthread_mutex_unlock(&locks[i]);
	}
	return NULL;
}

static void *reader(void *arg)
{
	long sum = 0;

	/* After the writer, mostly: the slots it filled are remembered by then. */
	spin_us(200000);
	for (long i = 0; i < LOCKS; i++) {
		pthread_mutex_lock(&locks[i]);
		sum += get(i);
		pthread_mutex_unlock(&locks[i]);
	}
	return (void *)sum;
}

int main(void)
{
	locks = calloc(LOCKS, sizeof(*locks));
	slots = calloc(LOCKS, sizeof(*slots));
	if (!locks || !slots)
		return 2;
	for (long i = 0; i < LOCKS; i++)
		pthread_mutex_init(&locks[i], NULL);
	return (long)run_pair(writer, NULL, reader, NULL) < 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: racy_poll_other_lock with one lock.
 *
 * The waiter polls the flag under lock m and writes x once it is set; the
 * publisher writes x, then sets the flag under m.  The lock orders the
 * flag's write before its read and so x = 1 before x = 2.  The decoder
 * leaves the polled load plain (its loop takes a lock first: -v "N polled
 * under a lock, left plain", the positive control), and the history's
 * model of the mutex is what orders the two.
 *
 * Expected: none
 */
#include "suite.h"

/* How the waiter takes its lock (the trylock variant defines it before including this). */
#ifndef TAKE_LOCK
#define TAKE_LOCK(m) pthread_mutex_lock(m)
#endif

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int flag;
static long x;

static SITE void publish(void)
{
	x = 1;
	pthread_mutex_lock(&m);
	flag = 1;
	pthread_mutex_unlock(&m);
}

static SITE void wait_and_write(void)
{
	for (;;) {
		TAKE_LOCK(&m);
		if (flag)
			break;
		pthread_mutex_unlock(&m);
	}
	pthread_mutex_unlock(&m);
	x = 2;
}

/* A millisecond late, so that the waiter polls a few times first (each round two sync calls). */
static void *publisher(void *arg)
{
	spin_us(1000);
	publish();
	return NULL;
}

static void *waiter(void *arg)
{
	wait_and_write();
	return NULL;
}

int main(void)
{
	run_pair(waiter, NULL, publisher, NULL);
	return x != 2;
}

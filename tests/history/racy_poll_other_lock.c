// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a flag polled under one lock, set under another (DataRaceBench's
 * DRB193, with pthread mutexes).
 *
 * The waiter takes lock b, tests the flag, lets b go, and goes round
 * again; the publisher writes x, then sets the flag under lock a.  The
 * loop's load is made under a lock each time round, so it is a plain load
 * that lock protects, not an atomic's: the two locks differ and order
 * nothing, so the flag and x race.  Taken for a spin-wait's acquire (a
 * polled load, -O2, no debug info), it ordered the publisher's x = 1
 * before the waiter's x = 2.  Both races have the one title.
 *
 * Expected: "data-race in publish / wait_and_write"
 */
#include "suite.h"

/* How the waiter takes its lock (the trylock variant defines it before including this). */
#ifndef TAKE_LOCK
#define TAKE_LOCK(m) pthread_mutex_lock(m)
#endif

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
/* The waiter's lock: another than the publisher's, or a itself (free_poll_same_lock.c). */
#ifndef WAITER_LOCK
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
#define WAITER_LOCK b
#endif
static int flag;
static long x;

static SITE void publish(void)
{
	x = 1;
	pthread_mutex_lock(&a);
	flag = 1;
	pthread_mutex_unlock(&a);
}

static SITE void wait_and_write(void)
{
	for (;;) {
		TAKE_LOCK(&WAITER_LOCK);
		if (flag)
			break;
		pthread_mutex_unlock(&WAITER_LOCK);
	}
	pthread_mutex_unlock(&WAITER_LOCK);
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

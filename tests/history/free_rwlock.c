// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a pthread rwlock, one writer and one reader.
 *
 * The writer updates a pair under the write lock; the reader checks it
 * under the read lock.
 *
 * Expected: race-free
 */
#include "suite.h"

#define ROUNDS 500

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct { long lo, hi; } pair;

static SITE void update(long v)
{
	pair.lo = v;
	pair.hi = v;
}

static SITE int consistent(void)
{
	return pair.lo == pair.hi;
}

static void *writer(void *arg)
{
	int i;

	for (i = 0; i < ROUNDS; i++) {
		pthread_rwlock_wrlock(&lock);
		update(i);
		pthread_rwlock_unlock(&lock);
	}
	return NULL;
}

static void *reader(void *arg)
{
	long i, bad = 0;

	for (i = 0; i < ROUNDS; i++) {
		pthread_rwlock_rdlock(&lock);
		bad += !consistent();
		pthread_rwlock_unlock(&lock);
	}
	return (void *)bad;
}

int main(void)
{
	void *bad;

	bad = run_pair(writer, NULL, reader, NULL);
	return bad != NULL;
}

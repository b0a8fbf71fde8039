// SPDX-License-Identifier: GPL-2.0-only
/*
 * A flag published with a release store and taken with acquire loads
 * before any read-modify-write touches it, built as Debian ships a
 * program: -O2, no debug info, stripped (tests/debuginfo-check.sh).  Both
 * sides are plain movs, and nothing but the lock-prefixed add that comes
 * after them shows the flag to be an atomic (bpf/atomics.bpf.h): the
 * history and the watchpoints see two plain movs, unordered, at an address
 * no lock has touched yet.  Each round uses a flag of its own, so that
 * every round's first movs come before the flag is learned.  Race-free.
 *
 * The publisher stores 1; the taker spins until it reads it, and adds 1
 * with a lock-prefixed add; the publisher spins until it reads 2 and goes
 * on to the next flag.
 *
 *   relaxed_publish [ROUNDS [racy]]
 *
 * racy: the taker stores 2 with a plain mov instead of the add: no lock
 * ever touches the flags, which are then plain ints written by two threads
 * with no synchronization kcsand can see, and must still be reported.  The
 * program prints where the flags start ("flags at 0x...").
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

/* A flag per round, each in a cache line of its own. */
struct flag {
	int ready;
	char pad[60];
};

static struct flag *flags;
static long rounds = 200;
static int racy;

static __attribute__((noinline)) void publish(int *f)
{
	__atomic_store_n(f, 1, __ATOMIC_RELEASE);
}

static __attribute__((noinline)) int peek(int *f)
{
	return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}

static __attribute__((noinline)) void take(int *f)
{
	if (racy)
		__atomic_store_n(f, 2, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(f, 1, __ATOMIC_ACQ_REL);
}

/* Spin, yielding: the two threads share the machine's cores with other work. */
static void wait_for(int *f, int value)
{
	while (peek(f) != value)
		sched_yield();
}

static void *publisher(void *arg)
{
	for (long i = 0; i < rounds; i++) {
		publish(&flags[i].ready);
		wait_for(&flags[i].ready, 2);
	}
	return NULL;
}

static void *taker(void *arg)
{
	for (long i = 0; i < rounds; i++) {
		wait_for(&flags[i].ready, 1);
		take(&flags[i].ready);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t p, t;

	if (argc > 1)
		rounds = atol(argv[1]);
	racy = argc > 2;
	flags = calloc(rounds > 0 ? rounds : 1, sizeof(*flags));
	if (!flags || rounds < 1)
		return 2;
	printf("flags at %p\n", (void *)flags);
	fflush(stdout);
	if (pthread_create(&p, NULL, publisher, NULL) || pthread_create(&t, NULL, taker, NULL))
		return 2;
	pthread_join(p, NULL);
	pthread_join(t, NULL);
	printf("%ld flags published\n", rounds);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Short-lived threads for tests/daemon-faults.sh: rounds of a reader and
 * an unprobed writer racing on x, each pair living a few thousand
 * iterations and exiting, so that the site sampler's hot turns (execute
 * breakpoints on one thread) and the escalation's hardware watchpoints
 * (one perf event per thread) keep meeting threads that exit while their
 * breakpoints are armed.  A debug event left behind would kill the
 * process with SIGTRAP (status 133); the test asserts it never does.
 *
 *   churn [ROUNDS [ITERS]]     (defaults 40 and 3000)
 */
#include <pthread.h>
#include <stdlib.h>
#include "../common/trap_report.h"

#define RACY __attribute__((noinline, noipa))
#define barrier() asm volatile("" ::: "memory")

int x;
long ticks;

RACY int reader(void)
{
	return x;
}

RACY void writer(int v)
{
	x = v;
}

RACY void pace(void)
{
	ticks++;
}

static long iters;

static void *reader_thread(void *arg)
{
	for (long i = 0; i < iters; i++) {
		reader();
		barrier();
	}
	return NULL;
}

static void *writer_thread(void *arg)
{
	for (long i = 0; i < iters; i++) {
		writer(i + 1);
		pace();
		barrier();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 40;

	iters = argc > 2 ? atol(argv[2]) : 3000;
	for (long r = 0; r < rounds; r++) {
		pthread_t t[2];

		if (pthread_create(&t[0], NULL, reader_thread, NULL) ||
		    pthread_create(&t[1], NULL, writer_thread, NULL))
			return 2;
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * A counter incremented by two threads, each time under a pthread mutex:
 * the increments never overlap, so no watchpoint can be hit.  The mutex
 * code itself is in libc and is not probed.
 *
 * gcc 12 -O1:  increment: addq $0x1,counter(%rip)   (plain 8-byte RMW, watches)
 */
#include "scenario.h"

/*
 * Race-free: the two threads take turns, so this is about 2 x 100000
 * probed accesses in a row, 2-3 s under kcsand.
 */
#define ITERS 30000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
long counter;

RACY void increment(void)
{
	counter++;
}

static void *thread_main(void *arg)
{
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		increment();
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	void *(*const fn[])(void *) = { thread_main, thread_main };
	long n = scenario_iters(ITERS);

	run_threads(2, fn, (void *)n);
	if (counter != 2 * n) {
		fprintf(stderr, "mutex_protected: counter %ld, expected %ld\n", counter, 2 * n);
		return 1;
	}
	return 0;
}

/* kcsand-test: name=mutex_protected expect=none */

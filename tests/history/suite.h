/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every program of the happens-before suite shares.
 *
 * Each program shows one idea, in a few milliseconds natively.  A racy
 * program executes its racing pair of accesses once: the two accesses need
 * not overlap in time, and a detector that only sees overlapping accesses
 * (a soft watchpoint) will usually miss it, which is the point of the
 * suite.  A race-free program exercises one synchronization primitive over
 * data that would be racy without it.  The expected report title of each
 * program is in its header comment and in expect.tsv, which the tests and
 * bench/history-vs-tsan.sh read.
 *
 * Built with gcc -O1 -g and -pthread or -fopenmp (tests/tests.mk); the
 * programs marked "nofp" in expect.tsv without frame pointers.
 */
#ifndef KCSAND_HISTORY_SUITE_H
#define KCSAND_HISTORY_SUITE_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * The functions that make the accesses the suite is about: they name the
 * report.  noipa keeps gcc from inlining, cloning or hoisting their calls,
 * so that each call in the source is one execution of the access.
 */
#define SITE __attribute__((noinline, noipa))

/* Spins for about US microseconds of the calling thread's time, touching nothing shared. */
static inline void spin_us(long us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static inline void start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	if (pthread_create(t, NULL, fn, arg)) {
		fprintf(stderr, "cannot create a thread\n");
		exit(2);
	}
}

#endif /* KCSAND_HISTORY_SUITE_H */

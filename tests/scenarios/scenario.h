/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared scaffolding for the end-to-end scenarios: threads that start
 * together behind a barrier and run bounded loops (SCENARIO_LOOP), and the
 * main() that runs them (SCENARIO_MAIN).
 *
 * Built with gcc -O1 -g -fno-omit-frame-pointer -pthread.  Everything here
 * is static and used once, so it is inlined into main() or lives in
 * functions that touch no shared data: the only accesses kcsand should
 * care about are the ones in each scenario's RACY functions.
 *
 * Each scenario states what kcsand must print in machine-readable
 * "kcsand-test:" comments, read by tests/run-scenarios.sh.
 */
#ifndef KCSAND_SCENARIO_H
#define KCSAND_SCENARIO_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "../common/trap_report.h"

/*
 * The functions whose accesses race.  noinline keeps them as separate
 * symbols that name the report; noipa additionally keeps gcc from
 * cloning them (writer.constprop.0) or proving them pure and hoisting
 * their calls out of the loops.
 */
#define RACY __attribute__((noinline, noipa))

/* Compiler barrier between loop iterations. */
#define barrier() asm volatile("" ::: "memory")

static pthread_barrier_t start_line;

/*
 * Iterations per thread: the scenario's default, or KCSAND_TEST_ITERS
 * from the environment to make a run shorter or longer without
 * rebuilding.  Read in main() before any thread starts.
 */
static inline long scenario_iters(long dflt)
{
	const char *s = getenv("KCSAND_TEST_ITERS");
	long n = s ? strtol(s, NULL, 0) : 0;

	return n > 0 ? n : dflt;
}

/* Every thread calls this first, so that all of them start racing together. */
static inline void wait_for_start(void)
{
	pthread_barrier_wait(&start_line);
}

/*
 * Set by SIGUSR1, which tests/run-scenarios.sh sends (stop=report) once it has
 * seen the report a case wants: the loops that run until then (SCENARIO_TIMED,
 * scenario_running()) end at their next look, and the program exits 0.  A
 * racy case so runs until its report, bounded by its time, not for a length a
 * loaded machine may be too slow for.  Volatile: kcsand takes its accesses as
 * marked, so the handler's write races with nothing.  Only the timed loops
 * install the handler: the other programs keep their sites as they were
 * (tests/daemon-json.sh counts mutex_protected's).
 */
static volatile sig_atomic_t scenario_stop;

static inline void scenario_on_stop(int sig)
{
	(void)sig;
	scenario_stop = 1;
}

/* Runs the thread functions concurrently with arg each and joins them. */
static inline void run_threads(int n, void *(*const fn[])(void *), void *arg)
{
	pthread_t tid[8];
	int i;

	if (n > 8 || pthread_barrier_init(&start_line, NULL, n)) {
		fprintf(stderr, "scenario: cannot set up %d threads\n", n);
		exit(1);
	}
	for (i = 0; i < n; i++) {
		if (pthread_create(&tid[i], NULL, fn[i], arg)) {
			perror("pthread_create");
			exit(1);
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&start_line);
}

/*
 * A thread function NAME that waits at the start line, then runs the
 * statement n times (n: what run_threads() hands it; i counts the
 * iterations), with a compiler barrier between two.  The racing accesses
 * stay in the RACY functions the statement calls: this only drives them.
 */
#define SCENARIO_LOOP(name, ...)				\
	static void *name(void *arg)				\
	{							\
		long i, n = (long)arg;				\
								\
		wait_for_start();				\
		for (i = 0; i < n; i++) {			\
			__VA_ARGS__;				\
			barrier();				\
		}						\
		return NULL;					\
	}

/*
 * Whole seconds on the monotonic clock, for the timed loops: integers, so that
 * a probed loop reads no floating-point constant (a site more) to compute it.
 */
static inline long scenario_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/*
 * Whether a timed loop goes on at its iteration i: until the time end, or
 * until stopped (scenario_stop).  The clock and the flag are read every 1024
 * iterations, which adds next to nothing to what kcsand sees.
 */
static inline int scenario_running(long i, long end)
{
	return (i & 1023) || (!scenario_stop && scenario_now() < end);
}

/*
 * SCENARIO_LOOP for a time instead of n iterations, or until stopped: for
 * threads that must still run once kcsanctl has set up what it sets up late
 * (a hardware watchpoint in each thread), and for races a case waits for.
 */
#define SCENARIO_TIMED(name, seconds, ...)				\
	static void *name(void *arg)					\
	{								\
		long end = scenario_now() + (seconds);			\
		long i;							\
									\
		signal(SIGUSR1, scenario_on_stop);			\
		wait_for_start();					\
		for (i = 0; scenario_running(i, end); i++) {		\
			__VA_ARGS__;					\
			barrier();					\
		}							\
		return NULL;						\
	}

/* main(): the thread functions run together, iters times each (KCSAND_TEST_ITERS). */
#define SCENARIO_MAIN(iters, ...)						\
	int main(void)								\
	{									\
		void *(*const fn[])(void *) = { __VA_ARGS__ };			\
										\
		run_threads(sizeof(fn) / sizeof(fn[0]), fn,			\
			    (void *)scenario_iters(iters));			\
		return 0;							\
	}

#endif /* KCSAND_SCENARIO_H */

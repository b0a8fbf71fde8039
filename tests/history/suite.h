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
 * bench/user/history-vs-tsan.sh read.
 *
 * Built with gcc -O1 -g and -pthread or -fopenmp (tests/tests.mk); the
 * programs marked "nofp" in expect.tsv without frame pointers.
 */
#ifndef KCSAND_HISTORY_SUITE_H
#define KCSAND_HISTORY_SUITE_H

#include <dirent.h>
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/*
 * The functions that make the accesses the suite is about: they name the
 * report.  noipa keeps gcc from inlining, cloning or hoisting their calls,
 * so that each call in the source is one execution of the access.
 */
#define SITE __attribute__((noinline, noipa))

/*
 * How many of its ROUNDS a program runs whose rounds are there for the sampler: at the
 * defaults its run must last long enough to leave the sampler's cold start.  In the run
 * tests/history-check.sh makes with every site armed (a "full" program's second run, with
 * KCSAND_HISTORY_FULL set) there is no cold start to leave: every access is checked from
 * the first, each a uprobe hit of 28-60 us, and every round repeats the first's orderings
 * (2.6 million checks, 157 s of free_cxx_static_local's full run at load 15).  A tenth.
 */
static inline int suite_rounds(int rounds)
{
	return getenv("KCSAND_HISTORY_FULL") ? (rounds + 9) / 10 : rounds;
}

/* Spins for about US microseconds of the calling thread's time, touching nothing shared. */
static inline void spin_us(long us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

/* The monotonic clock in nanoseconds: how long a program has filled (a fill that lasts FILL_NS). */
static inline long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

static inline void start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	if (pthread_create(t, NULL, fn, arg)) {
		fprintf(stderr, "cannot create a thread\n");
		exit(2);
	}
}

/*
 * Waits until the process has at most n threads: those that returned have
 * ended (not only returned), though nobody joined them.
 */
static inline void wait_threads_at_most(int n)
{
	char line[128];
	int threads;

	for (;;) {
		FILE *f = fopen("/proc/self/status", "r");

		threads = 0;
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "Threads: %d", &threads) == 1)
				break;
		if (f)
			fclose(f);
		if (threads <= n)
			return;
		spin_us(100);
	}
}

/*
 * Starts fn((void *)0) to fn((void *)(n - 1)) in threads t[0..n-1], in
 * waves of `wave`: each thread waits at *done before it ends, and a wave's
 * threads have ended before the next wave starts, so that at most `wave`
 * are alive while all n are created and none joined: the caller joins them.
 */
static inline void start_waves(pthread_t *t, long n, long wave, void *(*fn)(void *),
			       pthread_barrier_t *done)
{
	pthread_barrier_init(done, NULL, wave + 1);
	for (long i = 0; i < n; i++) {
		start_thread(&t[i], fn, (void *)i);
		if (i % wave == wave - 1) {
			pthread_barrier_wait(done);
			wait_threads_at_most(1);
		}
	}
}

#ifndef __cplusplus
#include <stdatomic.h>

/*
 * Waits, max_us microseconds at most, until another thread has set *flag:
 * a relaxed load, which orders nothing, so that the wait makes the racing
 * pair's order likely without synchronizing it.
 */
static inline void wait_flag(atomic_int *flag, long max_us)
{
	for (long us = 0; us < max_us && !atomic_load_explicit(flag, memory_order_relaxed);
	     us += 100)
		spin_us(100);
}
#endif

/* Runs a(arg_a) and b(arg_b) in two threads and joins them; returns what b returned. */
static inline void *run_pair(void *(*a)(void *), void *arg_a, void *(*b)(void *), void *arg_b)
{
	pthread_t ta, tb;
	void *ret;

	start_thread(&ta, a, arg_a);
	start_thread(&tb, b, arg_b);
	pthread_join(ta, NULL);
	pthread_join(tb, &ret);
	return ret;
}

/* Waits until the process has one thread left, reading /proc (no sync function). */
static inline void wait_alone(void)
{
	for (;;) {
		DIR *d = opendir("/proc/self/task");
		int n = 0;

		if (!d)
			exit(2);
		while (readdir(d))
			n++;
		closedir(d);
		if (n <= 3)	/* ".", ".." and the main thread */
			return;
		usleep(1000);
	}
}

/*
 * Runs fn((void *)0) to fn((void *)(n - 1)), each in a detached thread, one
 * after another: the next starts once the one before has ended, which is
 * no synchronization kcsand sees.  What the threads leave behind (freed
 * blocks, a stack, TLS) goes to the next one with nothing ordering the two.
 */
static inline int run_detached_in_turn(void *(*fn)(void *), long n)
{
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (long t = 0; t < n; t++) {
		pthread_t th;

		if (pthread_create(&th, &attr, fn, (void *)t))
			return 2;
		wait_alone();
	}
	return 0;
}

/* A shared variable and the two SITE functions that write and read it. */
#define SUITE_SHARED(type, var, put, take)	\
	static type var;			\
						\
	static SITE void put(type v)		\
	{					\
		var = v;			\
	}					\
						\
	static SITE type take(void)		\
	{					\
		return var;			\
	}

/* A shared counter and the SITE function that increments it. */
#define SUITE_COUNTER(var, bump)	\
	static long var;		\
					\
	static SITE void bump(void)	\
	{				\
		var++;			\
	}

/*
 * The lock-heavy race-free target's state (hb_paused_locks.c and
 * tests/daemon/locked_until.c): a plain counter that the workers bump()
 * and a plain value that a passer pass()es to them, to take(), all under
 * lock.
 */
#define SUITE_LOCKED_COUNTER()						\
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;	\
	SUITE_COUNTER(counter, bump)					\
	SUITE_SHARED(long, handoff, pass, take)

/*
 * The shared array of the OpenMP task programs: n slots that tasks fill()
 * and their creator sums (sum_slots()) once the construct under test says
 * the tasks are done.  Round r fills every slot with r, so that rounds
 * 0 to rounds - 1, with no fill lost, sum to slots_filled(rounds).
 */
#define SUITE_SLOTS(n)						\
	static long slot[n];					\
								\
	static SITE void fill(int k, long v)			\
	{							\
		slot[k] = v;					\
	}							\
								\
	static SITE long sum_slots(void)			\
	{							\
		long s = 0;					\
								\
		for (int k = 0; k < (n); k++)			\
			s += slot[k];				\
		return s;					\
	}							\
								\
	static inline long slots_filled(long rounds)		\
	{							\
		return (long)(n) * rounds * (rounds - 1) / 2;	\
	}

/*
 * The one-shot write/write race: left() stores 1 to mode in store_left(),
 * right() stores 2 in store_right() a millisecond later, and nothing orders
 * them ("data-race in store_left / store_right").
 */
#define SUITE_WRITE_WRITE_PAIR()		\
	static long mode;			\
						\
	static SITE void store_left(void)	\
	{					\
		mode = 1;			\
	}					\
						\
	static SITE void store_right(void)	\
	{					\
		mode = 2;			\
	}					\
						\
	static void *left(void *arg)		\
	{					\
		store_left();			\
		return NULL;			\
	}					\
						\
	static void *right(void *arg)		\
	{					\
		spin_us(1000);			\
		store_right();			\
		return NULL;			\
	}

/*
 * The one-shot write/read race and its program: writer() makes the
 * write, reader() the read 20 ms later, in two threads nothing orders;
 * main() runs the pair and exits 0.  write is a statement, read an
 * integer expression (the SITE calls the report is titled by).
 */
#define SUITE_WRITE_THEN_READ(write, read)	\
	static void *writer(void *arg)		\
	{					\
		write;				\
		return NULL;			\
	}					\
						\
	static void *reader(void *arg)		\
	{					\
		spin_us(20000);			\
		return (void *)(long)(read);	\
	}					\
						\
	int main(void)				\
	{					\
		run_pair(writer, NULL, reader, NULL);	\
		return 0;			\
	}

/* The plugin of a ",plugin" program: NAME_lib.so beside it (expect.tsv), or NULL. */
static inline void *load_plugin(const char *argv0)
{
	char exe[PATH_MAX], path[PATH_MAX + 32], name[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	snprintf(name, sizeof(name), "%s", argv0);
	snprintf(path, sizeof(path), "%s/%s_lib.so", dirname(exe), basename(name));
	return dlopen(path, RTLD_NOW);
}

#endif /* KCSAND_HISTORY_SUITE_H */

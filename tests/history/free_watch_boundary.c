// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: racy_watch_boundary with a barrier between the boundary's read
 * and its write.
 *
 * The reader reads the last element of the writer's chunk at its start,
 * then waits at a barrier; the writer fills its chunk but the last element
 * for 200 passes and 4 seconds at least (put() backed off by the sampler), waits at the
 * barrier, then fills it with the last.  The history's watch of the read
 * traps that write, which the barrier orders after the read: checked, and
 * silent.  The positive control is the watch's catch (-v: "N writes caught
 * by those watches and checked").
 *
 * Expected: none
 */
#include "suite.h"

#define N 256
/* Long enough for put() to use up the cold start's credit, and for the watch to be armed. */
#define FILL_PASSES 200
#define FILL_NS 4000000000L

static long a[N];
static pthread_barrier_t met;

static SITE void put(int i, long v)
{
	a[i] = v;
}

static SITE long take(int i)
{
	return a[i];
}

static long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void *writer(void *arg)
{
	long t0 = now_ns(), pass = 0;

	while (pass < FILL_PASSES || now_ns() - t0 < FILL_NS) {
		for (int i = 0; i < N - 1; i++)
			put(i, pass);
		pass++;
	}
	pthread_barrier_wait(&met);
	for (int i = 0; i < N; i++)
		put(i, pass);
	return NULL;
}

static void *reader(void *arg)
{
	long v = take(N - 1);

	pthread_barrier_wait(&met);
	return (void *)v;
}

int main(void)
{
	pthread_barrier_init(&met, NULL, 2);
	run_pair(reader, NULL, writer, NULL);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a read that gcc hoisted out of its loop, so it happens once.
 *
 * The reader calls get_limit() on every iteration, but gcc proves the
 * callee pure and calls it once, before the loop.  The writer changes the
 * limit once, with no synchronization between the two threads.
 *
 * Expected: "data-race in get_limit / set_limit"
 */
#include "suite.h"

#define N 4096

static int limit = N;
static int data[N];

/* noinline but not noipa: gcc must be free to find it pure and hoist it. */
static __attribute__((noinline)) int get_limit(void)
{
	return limit;
}

static SITE void set_limit(int n)
{
	limit = n;
}

static void *reader(void *arg)
{
	long i, sum = 0;

	for (i = 0; i < N; i++)
		if (i < get_limit())
			sum += data[i];
	return (void *)sum;
}

static void *writer(void *arg)
{
	set_limit(N / 2);
	return NULL;
}

int main(void)
{
	pthread_t r, w;
	void *sum;
	int i;

	for (i = 0; i < N; i++)
		data[i] = i;
	start_thread(&r, reader, NULL);
	start_thread(&w, writer, NULL);
	pthread_join(r, &sum);
	pthread_join(w, NULL);
	printf("%ld\n", (long)sum);
	return 0;
}

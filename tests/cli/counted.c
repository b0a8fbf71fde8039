// SPDX-License-Identifier: GPL-2.0-only
/*
 * A known number of probed accesses from several threads at once, for the
 * check of the engine's per-CPU counters (run-cli-tests.sh counters_exact):
 * THREADS threads each call peek() ITERS times on a variable of their own,
 * so nothing races and every call is one probed read.
 *
 *   counted THREADS ITERS
 */
#include <pthread.h>
#include <stdlib.h>

static long iters;

__attribute__((noinline, noipa)) long peek(const long *p)
{
	return *p;
}

static void *run(void *arg)
{
	long mine = (long)arg, sum = 0;

	for (long i = 0; i < iters; i++)
		sum += peek(&mine);
	return (void *)sum;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? strtol(argv[1], NULL, 0) : 0;
	pthread_t t[64];

	iters = argc > 2 ? strtol(argv[2], NULL, 0) : 0;
	if (n < 1 || n > 64 || iters < 1)
		return 2;
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a table initialized through pthread_once by whichever thread
 * comes first, then read by both.
 *
 * Expected: race-free
 */
#include "suite.h"

#define N 64

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int table[N];

static SITE void init_table(void)
{
	int i;

	for (i = 0; i < N; i++)
		table[i] = i * i;
}

static SITE long sum_table(void)
{
	long s = 0;
	int i;

	for (i = 0; i < N; i++)
		s += table[i];
	return s;
}

static void *worker(void *arg)
{
	pthread_once(&once, init_table);
	return (void *)sum_table();
}

int main(void)
{
	run_pair(worker, NULL, worker, NULL);
	return 0;
}

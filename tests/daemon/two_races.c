// SPDX-License-Identifier: GPL-2.0-only
/*
 * A long-running target for the daemon tests: two independent races,
 * reader_a / writer_a on a and reader_b / writer_b on b, each between two
 * threads, that go on until the process is killed (or for
 * KCSAND_TEST_ITERS iterations per thread).  The tests silence one pair
 * with the filter list and check that the other goes on being reported.
 *
 * The two threads of a race run on two different CPUs where the process
 * may use two: four busy threads on two CPUs are placed two a CPU, and a
 * pair placed on one CPU never overlaps, so its race was seen only when
 * the scheduler happened to move a thread (reports 14 s apart, and daemon
 * tests that waited 20 s for one failed).
 *
 * gcc 12 -O1: each racy function is one plain 4-byte load or store.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#define RACY __attribute__((noinline, noipa))
#define barrier() asm volatile("" ::: "memory")

int a __attribute__((aligned(64)));
int b __attribute__((aligned(64)));

RACY int reader_a(void)
{
	return a;
}

RACY void writer_a(int v)
{
	a = v;
}

RACY int reader_b(void)
{
	return b;
}

RACY void writer_b(int v)
{
	b = v;
}

static long iters;

static void *run(void *arg)
{
	long which = (long)arg;

	for (long i = 0; !iters || i < iters; i++) {
		switch (which) {
		case 0:
			reader_a();
			break;
		case 1:
			writer_a(i);
			break;
		case 2:
			reader_b();
			break;
		default:
			writer_b(i);
			break;
		}
		barrier();
	}
	return NULL;
}

int main(void)
{
	const char *s = getenv("KCSAND_TEST_ITERS");
	pthread_t t[4];

	cpu_set_t allowed, one;
	int cpus[2], n = 0;

	iters = s ? strtol(s, NULL, 0) : 0;
	/* The first two CPUs this process may use: readers on one, writers on the other. */
	if (!sched_getaffinity(0, sizeof(allowed), &allowed))
		for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
			if (CPU_ISSET(c, &allowed))
				cpus[n++] = c;
	for (long i = 0; i < 4; i++) {
		pthread_create(&t[i], NULL, run, (void *)i);
		if (n == 2) {
			CPU_ZERO(&one);
			CPU_SET(cpus[i & 1], &one);
			pthread_setaffinity_np(t[i], sizeof(one), &one);
		}
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

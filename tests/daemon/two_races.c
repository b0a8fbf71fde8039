// SPDX-License-Identifier: GPL-2.0-only
/*
 * A long-running target for the daemon tests: two independent races,
 * reader_a / writer_a on a and reader_b / writer_b on b, each between two
 * threads, that go on until the process is killed (or for
 * KCSAND_TEST_ITERS iterations per thread).  The tests silence one pair
 * with the filter list and check that the other goes on being reported.
 *
 * gcc 12 -O1: each racy function is one plain 4-byte load or store.
 */
#include <pthread.h>
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

	iters = s ? strtol(s, NULL, 0) : 0;
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

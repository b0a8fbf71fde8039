// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a loop of parallel regions, each reading what the master wrote
 * before it, in a program without its outlined functions' symbols, as a
 * distribution ships an OpenMP program (stripped).
 *
 * The master fills a[] (serial), then a `parallel for` scales a[] into b[],
 * then the master adds b[] up; round after round.  What orders the fill
 * before the region's reads is the region's start, and its end before the
 * sum: the outlined function's entry and return.  gcc names that function
 * main._omp_fn.0, a local symbol; the test's build removes it (",nofnsym":
 * objcopy --strip-symbol), so the history finds the function only from the
 * call that runs it, GOMP_parallel(fn, ...).  Before it did, every run was
 * reported as `fill / scale` or `scale / total`; a stripped build of the
 * same code (no .symtab at all), 3 runs of 3.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define N 1024

static int a[N], b[N];

static SITE void fill(int i, int round)
{
	a[i] = i + round;
}

static SITE void scale(int i)
{
	b[i] = a[i] * 2;
}

static SITE long total(int i)
{
	return b[i];
}

int main(void)
{
	int rounds = suite_rounds(300);
	long sum = 0;

	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < N; i++)
			fill(i, r);
#pragma omp parallel for num_threads(2) schedule(static)
		for (int i = 0; i < N; i++)
			scale(i);
		for (int i = 0; i < N; i++)
			sum += total(i);
	}
	printf("%ld\n", sum);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * A loop whose only probed instruction is one plain read-modify-write per
 * iteration; prints the loop's own time per iteration in ns, so that
 * process start-up and attach time do not blur the per-hit figure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

long counter;

__attribute__((noinline, noipa)) void touch(void)
{
	counter++;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		touch();
		asm volatile("" ::: "memory");
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}

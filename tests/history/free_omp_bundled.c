// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: sums under critical sections, in a program that brings its
 * own copy of libgomp (RUNPATH $ORIGIN/bundled-lib, the copy put there by
 * the build).  The process maps that copy, not the system's, so its sync
 * functions must be probed in that file: uprobes are per file.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define N 20000

static long total;

static SITE void add(long *sum, long v)
{
	*sum += v;
}

int main(void)
{
	int i;

#pragma omp parallel for num_threads(2)
	for (i = 0; i < N; i++) {
#pragma omp critical
		add(&total, i);
	}
	return total != (long)N * (N - 1) / 2;
}

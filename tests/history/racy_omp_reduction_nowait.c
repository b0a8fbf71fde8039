// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: data handed on by a reduction with nowait.
 *
 * The first thread writes the data, then takes its part of a loop that
 * reduces into `total`, with nowait; the second combines its part after
 * the first's (it waits for a relaxed flag the first raises after the
 * loop), then reads the data.  gcc combines each part with a relaxed
 * atomic add on the pragma's line: it orders nothing, and nowait removed
 * the barrier that would have.  Taken as acquire and release, the second
 * combine made the read look ordered after the write.  The flag's atomics
 * are relaxed too, by their clause.
 *
 * Expected: "data-race in put_data / take_data"
 */
#include <omp.h>
#include "suite.h"

#define N 64

SUITE_SHARED(long, data, put_data, take_data)

static long total;
static int done;

int main(void)
{
	long got = 0;
	int i;

#pragma omp parallel num_threads(2)
	{
		int me = omp_get_thread_num(), r;

		if (me == 0)
			put_data(42);
#pragma omp for schedule(static) reduction(+ : total) nowait
		for (i = 0; i < N; i++) {
			if (me && i == N / 2) {
				do {
#pragma omp atomic read relaxed
					r = done;
				} while (!r);
			}
			total += i;
		}
		if (me == 0) {
#pragma omp atomic write relaxed
			done = 1;
		} else {
			got = take_data();
		}
	}
	return got != 42 || total != (long)N * (N - 1) / 2;
}

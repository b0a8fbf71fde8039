// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: data handed over with relaxed atomics and flushes, the way
 * OpenMP 5's own examples do it.  The producer writes the data, flushes
 * (a release flush), then sets a flag with `atomic write relaxed`; the
 * consumer polls the flag with `atomic read relaxed`, then flushes (an
 * acquire flush) and reads the data.  The relaxed atomics order nothing
 * alone: the flushes beside them make the write a release and the read
 * an acquire.  gcc compiles the flush to a locked no-op on the stack, and
 * the atomics to plain movs: only the source says what they are.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

SUITE_SHARED(long, data, put_data, take_data)

static int ready;

int main(void)
{
	long got = 0;

#pragma omp parallel num_threads(2)
	{
		if (omp_get_thread_num() == 0) {
			put_data(42);
#pragma omp flush
#pragma omp atomic write relaxed
			ready = 1;
		} else {
			int f;

			do {
#pragma omp atomic read relaxed
				f = ready;
			} while (!f);
#pragma omp flush
			got = take_data();
		}
	}
	return got != 42;
}

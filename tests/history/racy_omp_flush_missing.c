// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: free_omp_flush without the producer's flush.  Its `atomic write
 * relaxed` of the flag is then no release, and the consumer's acquire
 * flush after reading the flag acquires nothing of the producer's: the
 * read of the data races with its write.
 *
 * Expected: data-race in put_data / take_data
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

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: data published through OpenMP atomics with the relaxed clause.
 * The producer writes the data, then counts a flag up with `omp atomic
 * update relaxed` (a lock-prefixed add, the same instruction a seq_cst
 * update would be); the consumer waits for it with `omp atomic read
 * relaxed`, then reads the data.  Relaxed atomics order nothing: the read
 * races with the write.  Only the clause in the source says relaxed.
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
#pragma omp atomic update relaxed
			ready += 1;
		} else {
			int r;

			do {
#pragma omp atomic read relaxed
				r = ready;
			} while (!r);
			got = take_data();
		}
	}
	return got != 42;
}

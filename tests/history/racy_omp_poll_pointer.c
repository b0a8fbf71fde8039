// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: the twin of free_omp_poll_pointer (",nog"), whose producer fills
 * its data after setting the flag: the poll through the reloaded pointer
 * is an acquire of the flag's release, which orders nothing written after
 * it.  One racing pair of the data, which the poll must not order away.
 *
 * Expected: "data-race in consume / produce"
 */
#include <omp.h>
#include "suite.h"

static SITE void produce(int *data)
{
	for (int i = 0; i < 64; i++)
		data[i] = i * 7;
}

static SITE long consume(const int *data)
{
	long sum = 0;

	for (int i = 0; i < 64; i++)
		sum += data[i];
	return sum;
}

int main(void)
{
	int data[64] = { 0 }, ready = 0;
	long sum = 0;

#pragma omp parallel num_threads(2) shared(data, ready, sum)
	{
		if (omp_get_thread_num() == 0) {
			/*
			 * The poll first, so that its load has taught the flag's address
			 * by the store: a store before that is taken as a release whose
			 * epoch covers what follows it up to the next release
			 * (docs/marking.md), the fill too.
			 */
			spin_us(2000);
#pragma omp atomic write release
			ready = 1;
			produce(data);
		} else {
			int seen = 0;

			while (!seen) {
#pragma omp atomic read acquire
				seen = ready;
			}
			spin_us(2000);	/* after the producer's fill, as a rule */
			sum = consume(data);
		}
	}
	printf("%ld\n", sum >= 0);
	return 0;
}

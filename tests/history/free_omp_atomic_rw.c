// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a flag handed back and forth with `#pragma omp atomic read`
 * and `write`, which gcc compiles to plain movs (the seq_cst write to an
 * xchg).  Only the pragma on the line above says they are atomic: with
 * -g the marking reads it.  The data the flag guards is plain.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define ROUNDS 10000

static int flag;
SUITE_SHARED(long, data, put_data, take_data)

static void produce(void)
{
	for (long i = 1; i <= ROUNDS; i++) {
		int f;

		do {
#pragma omp atomic read
			f = flag;
		} while (f);
		put_data(i);
#pragma omp atomic write seq_cst
		flag = 1;
	}
}

static long consume(void)
{
	long sum = 0;

	for (long i = 1; i <= ROUNDS; i++) {
		int f;

		do {
#pragma omp atomic read
			f = flag;
		} while (!f);
		sum += take_data();
#pragma omp atomic write
		flag = 0;
	}
	return sum;
}

int main(void)
{
	long sum = 0;

#pragma omp parallel num_threads(2) reduction(+:sum)
	{
		if (omp_get_thread_num() == 0)
			produce();
		else
			sum += consume();
	}
	return sum != (long)ROUNDS * (ROUNDS + 1) / 2;
}

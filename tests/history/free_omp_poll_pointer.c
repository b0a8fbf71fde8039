// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: an OpenMP flag published by an atomic write and polled by an
 * atomic read, built without debug info (",nog"), as DataRaceBench's
 * DRB143 is when stripped.
 *
 * Thread 0 fills data, then `#pragma omp atomic write release` sets ready;
 * thread 1 polls ready with `#pragma omp atomic read acquire` until it is
 * set, then reads data.  Both are main's locals, shared: the region reaches
 * them through its data block, so gcc -O1 reloads the pointer each time
 * round (`mov (%rbx),%rax; mov (%rax),%eax; test %eax,%eax; je` back to
 * the reload).  The atomic read and write are plain movs; without -g only
 * the spin-wait rule can see the poll, and it took the reload for an
 * address that moves (a list walk).  Before it did not, every run was
 * reported (the flag's pair, and `consume / produce`).
 *
 * Expected: race-free
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
	int data[64], ready = 0;
	long sum = 0;

#pragma omp parallel num_threads(2) shared(data, ready, sum)
	{
		if (omp_get_thread_num() == 0) {
			spin_us(2000);	/* the poll runs first, as it usually does */
			produce(data);
#pragma omp atomic write release
			ready = 1;
		} else {
			int seen = 0;

			while (!seen) {
#pragma omp atomic read acquire
				seen = ready;
			}
			sum = consume(data);
		}
	}
	printf("%ld\n", sum);
	return sum != 64 * 63 / 2 * 7;
}

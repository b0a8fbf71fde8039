// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a dependence chain that fans out and back in, round after
 * round.  A writer task (depend(out: item)) sets the item; two reader
 * tasks (depend(in: item)) read it, each into a slot of its own, and are
 * not ordered with each other; the next round's writer (depend(inout:
 * item)) comes after both readers, and a summing task (depend(in: part))
 * after the readers' slots.  The readers run in parallel with each other,
 * never with the writers.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define ROUNDS 100

static long item, part[2], total;

static SITE void write_item(long v)
{
	item = v;
}

static SITE void read_item(int k)
{
	part[k] = item;
}

static SITE void add_parts(void)
{
	total += part[0] + part[1];
}

int main(void)
{
#pragma omp parallel num_threads(2)
#pragma omp single
	{
		long i;

		for (i = 0; i < ROUNDS; i++) {
#pragma omp task depend(inout: item) firstprivate(i)
			write_item(i);
#pragma omp task depend(in: item) depend(out: part[0])
			read_item(0);
#pragma omp task depend(in: item) depend(out: part[1])
			read_item(1);
#pragma omp task depend(in: part[0], part[1]) depend(inout: total)
			add_parts();
		}
	}
	return total != (long)ROUNDS * (ROUNDS - 1);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: taskwait waits for the children of the current task, not for
 * their children.  A child creates a grandchild that writes the result
 * and returns without waiting for it; the parent's taskwait returns when
 * the child is done, and its read of the result races with the
 * grandchild's write.
 *
 * The child waits (up to 200 ms, with relaxed loads, which order nothing)
 * until the grandchild has written, so that the grandchild has usually
 * finished when the parent reads: a detector whose taskwait acquires every
 * finished task, rather than the children, then takes the write for
 * ordered.
 *
 * Expected: data-race in get_result / put_result
 */
#include <omp.h>
#include <stdatomic.h>
#include "suite.h"

static long result;
static atomic_int written;

static SITE void put_result(long v)
{
	result = v;
	atomic_store_explicit(&written, 1, memory_order_relaxed);
}

static SITE long get_result(void)
{
	return result;
}

int main(void)
{
	long got = 0;

#pragma omp parallel num_threads(2)
#pragma omp single
	{
#pragma omp task
		{
#pragma omp task
			put_result(7);
			wait_flag(&written, 200000);
		}
#pragma omp taskwait
		got = get_result();
	}
	return got < 0;
}

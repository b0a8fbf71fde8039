// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a task created to read a message, and the message rewritten by
 * its creator right after, with no taskwait between.  The task runs
 * later, at the barrier, on its creator's own thread: the other thread is
 * kept away from the barrier until the task has started (up to a second,
 * with relaxed loads, which order nothing).  The task's read and the
 * creator's write are not ordered, though one thread made both, one after
 * the other: a detector that gives the tasks a thread runs the thread's
 * clock takes that for program order.
 *
 * Expected: data-race in consume / rewrite
 */
#include <omp.h>
#include <stdatomic.h>
#include "suite.h"

static int msg;
static long seen;
static atomic_int started;

static SITE void consume(void)
{
	atomic_store_explicit(&started, 1, memory_order_relaxed);
	seen = msg;
}

static SITE void rewrite(void)
{
	msg = 2;
}

int main(void)
{
	msg = 1;
#pragma omp parallel num_threads(2)
	{
		if (omp_get_thread_num() == 0) {
#pragma omp task
			consume();
			rewrite();
		} else {
			wait_flag(&started, 1000000);
		}
	}
	return seen == 0;
}

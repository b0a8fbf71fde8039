// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a task that outlives its data, for want of a taskwait.
 *
 * The single thread hands a buffer to a task and, without waiting for the
 * task, reuses the buffer for the next message.  The other thread of the
 * team, idle at the end of single, runs the task meanwhile: its read of the
 * buffer and the reuse are not ordered.
 *
 * So that the task runs on the other thread (the spawning one would run it
 * itself at the end of single, after the reuse, and nothing would race),
 * the spawner waits, up to a second, until the task has started; the task
 * says so before it reads, so even a detector that takes the relaxed flag
 * for a release and an acquire orders nothing between the read and the
 * reuse.
 *
 * Expected: "data-race in consume / reuse"
 */
#include <omp.h>
#include <stdatomic.h>
#include "suite.h"

static int msg;
static long seen;
static atomic_int started;

static SITE void consume(int *m)
{
	atomic_store_explicit(&started, 1, memory_order_relaxed);
	seen = *m;
}

static SITE void reuse(int *m)
{
	*m = 2;
}

int main(void)
{
	msg = 1;
#pragma omp parallel num_threads(2)
#pragma omp single
	{
#pragma omp task
		consume(&msg);
		wait_flag(&started, 1000000);
		reuse(&msg);
	}
	return seen == 0;
}

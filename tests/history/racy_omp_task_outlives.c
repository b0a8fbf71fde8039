// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a task that outlives its data, for want of a taskwait.
 *
 * The single thread hands a buffer to a task and, without waiting for the
 * task, reuses the buffer for the next message.  The other thread of the
 * team, idle at the end of single, runs the task meanwhile: its read of the
 * buffer and the reuse are not ordered.
 *
 * Expected: "data-race in consume / reuse"
 */
#include <omp.h>
#include "suite.h"

static int msg;
static long seen;

static SITE void consume(int *m)
{
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
		/* Some work of its own first, so the idle thread takes the task. */
		spin_us(2000);
		reuse(&msg);
	}
	return seen == 0;
}

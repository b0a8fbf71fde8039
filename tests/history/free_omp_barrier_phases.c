// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a token handed from thread to thread across a team's
 * barriers of every kind gcc emits: `omp barrier`, the ends of a dynamic
 * `omp for`, of `sections` and of a `single copyprivate` (whose thread
 * that ran it waits in GOMP_single_copy_end(), the others in
 * GOMP_single_copy_start()), some phases with a nested team and its own
 * barriers in between.  In each phase one thread writes the token, both
 * read it past the next barrier, and the barrier after that orders the
 * reads before the next write.
 *
 * A detector that keeps a barrier's releases apart from the next one's
 * (two objects, by the parity of the barriers a thread passed in its
 * team) must count the same barriers in every thread, and keep an outer
 * team's count across a nested one.  Counting the `single`'s thread's
 * GOMP_single_copy_start() as a barrier made this program reported in 2
 * runs of 3: the threads' parities then differ until the next `single`.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define PHASES 16

static long token;

static SITE void pass_on(long v)
{
	token = v;
}

static SITE long take(void)
{
	return token;
}

static SITE void nothing(void)
{
}

/* A barrier of the kind phase i picks, reached by every thread of the team. */
static void barrier_of_kind(int i)
{
	int j, v = 0;

	switch (i % 4) {
	case 0: {
#pragma omp barrier
	}
		break;
	case 1:
#pragma omp for schedule(dynamic)
		for (j = 0; j < 4; j++)
			nothing();
		break;
	case 2:
#pragma omp single copyprivate(v)
		v = i;
		break;
	default:
#pragma omp sections
		{
#pragma omp section
			nothing();
#pragma omp section
			nothing();
		}
		break;
	}
	(void)v;
}

/* A nested team with three barriers of its own: an odd count, to move a parity. */
static void nested_team(void)
{
#pragma omp parallel num_threads(2)
	{
#pragma omp barrier
		nothing();
#pragma omp barrier
		nothing();
#pragma omp barrier
	}
}

int main(void)
{
	long sum = 0;

	omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2) reduction(+:sum)
	{
		int me = omp_get_thread_num(), i;

		for (i = 0; i < PHASES; i++) {
			if (i % 2 == me)
				pass_on(i);
			if (i % 8 == 7)
				nested_team();
			barrier_of_kind(i);
			sum += take();
			barrier_of_kind(i % 2);	/* no `single` here: its thread waits once less */
		}
	}
	return sum < 0;
}

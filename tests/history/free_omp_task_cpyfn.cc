// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a task's firstprivate object with a copy constructor.  gcc
 * hands GOMP_task a copy function (main._omp_cpyfn.N, the program's own
 * code) that runs the constructor into the task's data inside GOMP_task,
 * after its entry and before the task can start; the task then reads its
 * copy, on whichever thread runs it.  The copy is ordered before the task
 * by libgomp, as a plain firstprivate's memmove is.  Before the creation's
 * record took GOMP_task's own epoch (docs/history.md, "OpenMP tasks"),
 * every run was reported as `Box::Box / use`: the task's clock was the
 * creator's at the entry, before the copy.
 *
 * Expected: race-free
 */
#include <omp.h>

#define SITE __attribute__((noinline, noipa))

static const int TASKS = 200;

struct Box {
	long v[4];

	Box()
	{
		for (int i = 0; i < 4; i++)
			v[i] = i;
	}
	SITE Box(const Box &o)
	{
		for (int i = 0; i < 4; i++)
			v[i] = o.v[i] + 1;
	}
};

static SITE long use(const Box &b)
{
	return b.v[0] + b.v[3];
}

int main()
{
	long total = 0;
	Box b;

#pragma omp parallel num_threads(2)
#pragma omp single
	for (int r = 0; r < TASKS; r++) {
#pragma omp task firstprivate(b) shared(total)
		{
			long x = use(b);
#pragma omp atomic
			total += x;
		}
	}
	return total != TASKS * 5L;	/* each copy: 1 + 4 */
}

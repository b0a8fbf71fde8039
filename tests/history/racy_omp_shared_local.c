// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a task writes its parent's local through shared(x), and the parent
 * reads x before the taskwait that would order the two.  The task reaches
 * x through a pointer; the parent's own read is rbp-relative, a stack
 * access, which a detector that probes no stack slot never sees.  x's
 * address is passed to GOMP_task: the slot escapes, and its accesses are
 * sites (daemon/sites/escape.c).
 *
 * Expected: data-race in parent / parent._omp_fn.0
 */
#include <omp.h>
#include "suite.h"

static SITE int parent(void)
{
	int x = 0, seen;

#pragma omp task shared(x)
	x++;
	seen = x;
#pragma omp taskwait
	return seen + x;
}

int main(void)
{
	int r = 0;

#pragma omp parallel num_threads(2)
#pragma omp single
	r = parent();
	return r < 0;
}

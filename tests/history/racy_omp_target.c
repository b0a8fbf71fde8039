// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a loop-carried dependence in a parallel loop inside a target
 * region, run by the host fallback (no offload device).
 *
 * Each iteration reads the next element and writes its own: the first
 * thread's last iteration reads the element the second thread's first
 * iteration writes.  One racing pair, as off_by_one, but the first target
 * construct makes libgomp look for its offload plugins with dlopen(),
 * which fails on a machine with none.  A failed dlopen maps nothing, yet
 * it held the process and, for 100 ms after, every event acquired every
 * epoch of the process: the race looked ordered (bpf/history_sync.bpf.h).
 *
 * Expected: "data-race in bump / bump"
 */
#include <omp.h>
#include "suite.h"

#define N 256

static int a[N + 1];

static SITE void bump(int i)
{
	a[i] = a[i + 1] + 1;
}

int main(void)
{
	int i;

	for (i = 0; i <= N; i++)
		a[i] = i;
#pragma omp target map(tofrom : a)
#pragma omp parallel for num_threads(2) schedule(static)
	for (i = 0; i < N; i++)
		bump(i);
	return a[0] < 0;
}

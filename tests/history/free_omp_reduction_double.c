// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a reduction(+) on a double, built at -O2.  x86 has no atomic
 * add on a double, so gcc combines each thread's partial sum into the
 * shared one with a plain load, then a `lock cmpxchg` loop on it; here the
 * address reaches the cmpxchg through another register (lea 0x8(%rbp),%rcx
 * after mov 0x8(%rbp),%rdx).  Many parallel regions, so that the combine
 * runs often past the sampler's cold start: REGIONS, or as many as SECONDS
 * allow.  Each region's barrier waits for the other thread to get a CPU, and
 * on a loaded machine (load 20 on 2 CPUs) 20000 of them took 66-131 s under
 * kcsanctl, against 1.6 s on an idle one.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define N 64
#define REGIONS 20000
#define SECONDS 20

static double v[N];

static SITE double dot(int n, const double *a)
{
	double sum = 0;
	int i;

#pragma omp parallel for num_threads(2) reduction(+:sum)
	for (i = 0; i < n; i++)
		sum += a[i] * a[i];
	return sum;
}

int main(void)
{
	double total = 0, want = 0;
	struct timespec now;
	time_t end;
	int i, r;

	for (i = 0; i < N; i++) {
		v[i] = i;
		want += (double)i * i;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	end = now.tv_sec + SECONDS;
	for (r = 0; r < REGIONS; r++) {
		total += dot(N, v);
		if (!(r & 255) && (clock_gettime(CLOCK_MONOTONIC, &now), now.tv_sec >= end)) {
			r++;
			break;
		}
	}
	return total != want * r;
}

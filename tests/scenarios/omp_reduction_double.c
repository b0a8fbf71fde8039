// SPDX-License-Identifier: GPL-2.0-only
/*
 * A race-free OpenMP reduction on a double.
 *
 * Built with -O2 -fopenmp (tests/tests.mk).  gcc combines each thread's
 * partial sum into `sum` with a compare-and-swap loop, since x86 has no
 * atomic add for doubles: a plain load of sum, then lock cmpxchg on sum until
 * it succeeds.  The plain load is the atomic operation's read; kcsand marks
 * it ("cas loop read") instead of reporting it against another thread's
 * cmpxchg.
 *
 * gcc 12 -O2:  sum_up._omp_fn.0: mov rdx,[rip+sum]; 1: movq xmm1,rdx; mov rax,rdx;
 *              addsd xmm1,xmm0; movq rcx,xmm1; lock cmpxchg [rip+sum],rcx; jne 2f ...
 *              2: mov rdx,rax; jmp 1b
 */
#include <stdio.h>
#include <stdlib.h>

/* Elements per parallel loop, and rounds of it (KCSAND_TEST_ITERS). */
#define N	16
#define ROUNDS	2000

double sum;
double values[N];

__attribute__((noipa)) void sum_up(void)
{
	int i;

#pragma omp parallel for reduction(+:sum) num_threads(2)
	for (i = 0; i < N; i++)
		sum += values[i];
}

int main(void)
{
	const char *s = getenv("KCSAND_TEST_ITERS");
	long rounds = s && atol(s) > 0 ? atol(s) : ROUNDS, r;
	int i;

	for (i = 0; i < N; i++)
		values[i] = 1.0;
	for (r = 0; r < rounds; r++)
		sum_up();
	if (sum != (double)N * rounds) {
		fprintf(stderr, "omp_reduction_double: sum %f, expected %f\n", sum,
			(double)N * rounds);
		return 1;
	}
	return 0;
}

/* kcsand-test: name=omp_reduction_double args="-v --overhead-budget 100" iters=1000 expect=none log_re="^kcsand: site .* sum_up\._omp_fn\.0\+0x[0-9a-f]+ read 8 marked \(cas loop read\)$" log_re="setup_watchpoints: [1-9]" */

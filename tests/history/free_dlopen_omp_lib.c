// SPDX-License-Identifier: GPL-2.0-only
/*
 * The plugin of free_dlopen_omp.c: a parallel loop whose threads add
 * their part to a plain total in a critical section, built with -fopenmp
 * as a shared object and loaded with dlopen().
 */
#define N	1024

static long total;

__attribute__((noinline, noipa)) static void add_part(long v)
{
	total += v;
}

__attribute__((noinline, noipa)) static long take_total(void)
{
	return total;
}

long plugin_run(long round)
{
	add_part(-take_total());
#pragma omp parallel num_threads(2)
	{
		long part = 0;

#pragma omp for
		for (long i = 0; i < N; i++)
			part += round + i;
#pragma omp critical
		add_part(part);
	}
	return take_total();
}

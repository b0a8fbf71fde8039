// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a parallel for that appends to a shared log inside ordered,
 * so the appends happen one after the other, in iteration order.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

#define N 500

static int log_buf[N], log_len;

static SITE void append(int v)
{
	log_buf[log_len++] = v;
}

int main(void)
{
	int i;

#pragma omp parallel for ordered num_threads(2) schedule(static, 1)
	for (i = 0; i < N; i++) {
#pragma omp ordered
		append(i);
	}
	return log_len != N || log_buf[N - 1] != N - 1;
}

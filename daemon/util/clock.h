/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The clocks the daemon measures with, in nanoseconds: CLOCK_MONOTONIC
 * (timeouts, backoff windows; never a wall-clock time), and the calling
 * thread's CPU time (what a trap or a duty costs it, whatever else the
 * machine runs meanwhile).
 */
#ifndef KCSAND_CLOCK_H
#define KCSAND_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline uint64_t clock__thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * Per call of fn, the thread CPU time of the cheapest of `batches` batches
 * of calls in all: how a trap is calibrated (a probed function's calls
 * against unprobed ones).  Timed once in wall time, a calibration took every
 * preemption and interrupt of a loaded machine for trap time: 11 us one run,
 * 46-431 us the next eight at load 14 (a user-mode uprobe's), and a cold
 * start's credit (sampler.c) spent at that rate ran out long before the
 * hits it was to pay for.  Noise only ever adds, so the least batch is the
 * cost.  Where the thread's CPU clock is coarser than a batch (the TCG test
 * guest, loaded: a kernel-mode start measured getppid() at 0 ns, and a
 * breakpoint's trap at 0 ns with it), a batch reads 0: the mean of all
 * batches is then the cost, noise and all, rather than nothing.
 */
static inline double clock__least_cpu_ns(void (*fn)(void), int calls, int batches)
{
	int per = calls / batches > 0 ? calls / batches : 1;
	uint64_t least = UINT64_MAX, all = 0;

	for (int b = 0; b < batches; b++) {
		uint64_t t0 = clock__thread_cpu_ns(), t;

		for (int i = 0; i < per; i++)
			fn();
		t = clock__thread_cpu_ns() - t0;
		all += t;
		if (t < least)
			least = t;
	}
	if (!least && batches > 0)
		return (double)all / ((double)per * batches);
	return (double)least / per;
}

#endif

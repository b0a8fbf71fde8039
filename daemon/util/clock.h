/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one clock the daemon measures with: CLOCK_MONOTONIC, in nanoseconds
 * (timeouts, backoff windows, trap costs; never a wall-clock time).
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

#endif

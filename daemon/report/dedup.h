/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KCSAN's report_once_in_ms: one report per unordered pair of top frames
 * per interval.
 */
#ifndef KCSAND_DEDUP_H
#define KCSAND_DEDUP_H

#include <stdbool.h>
#include <stdint.h>

struct dedup;

struct dedup *dedup__new(void);
void dedup__free(struct dedup *d);
/*
 * Has the pair (a, b) been let through within interval_ms of now_ms?  If
 * not, it is recorded as let through now.  b is NULL for a race of
 * unknown origin: it is also a repeat when a known pair with a as one
 * side went through within the interval.
 */
bool dedup__seen(struct dedup *d, const char *a, const char *b, uint64_t now_ms,
		 unsigned int interval_ms);

#endif

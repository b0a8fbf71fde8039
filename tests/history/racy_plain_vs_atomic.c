// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a plain write racing with an atomic load of the same word.  One
 * thread writes the counter with a plain store; the other, later, reads it
 * with __atomic_load_n().  Nothing orders the two: by KCSAN's rule a
 * marked access races with a plain one (only two marked accesses never
 * race), and the report shows the atomic side as "read (marked)".  The two
 * accesses are milliseconds apart, so only a shadow that remembers marked
 * accesses too (or the plain write) can pair them.
 *
 * Expected: data-race in take_level / set_level, one side "(marked)"
 */
#include "suite.h"

static long level;

static SITE void set_level(long v)
{
	level = v;
}

static SITE long take_level(void)
{
	return __atomic_load_n(&level, __ATOMIC_RELAXED);
}

SUITE_WRITE_THEN_READ(set_level(7), take_level())

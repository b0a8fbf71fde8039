// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: two threads use one counter through relaxed atomics only (a
 * fetch_add, a store, loads).  Relaxed operations order nothing, so every
 * pair of them is unordered; they are all marked, and two marked accesses
 * never race (KCSAN's rule).  The history remembers marked accesses in its
 * shadow, so this is checked: each access meets the other thread's in the
 * shadow and must be let go because both are marked.
 *
 * Expected: none
 */
#include <stdatomic.h>
#include "suite.h"

static atomic_long hits;

static SITE void count_hit(void)
{
	atomic_fetch_add_explicit(&hits, 1, memory_order_relaxed);
}

static SITE void reset_hits(void)
{
	atomic_store_explicit(&hits, 0, memory_order_relaxed);
}

static SITE long peek_hits(void)
{
	return atomic_load_explicit(&hits, memory_order_relaxed);
}

static void *counter(void *arg)
{
	for (int i = 0; i < 200; i++)
		count_hit();
	return NULL;
}

static void *resetter(void *arg)
{
	long seen = 0;

	for (int i = 0; i < 200; i++) {
		seen += peek_hits();
		if (i % 50 == 49)
			reset_hits();
	}
	return (void *)seen;
}

int main(void)
{
	run_pair(counter, NULL, resetter, NULL);
	return 0;
}

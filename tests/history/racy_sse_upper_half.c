// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a 16-byte SSE store (movups) racing with an 8-byte read of its
 * upper half.  The store covers two 8-byte granules; the read touches only
 * the second.  A shadow that records a wide access in its first granule
 * alone never pairs them.
 *
 * Expected: data-race in read_high / store_pair
 */
#include <immintrin.h>
#include "suite.h"

static struct {
	long low, high;
} __attribute__((aligned(16))) pair;

static SITE void store_pair(long lo, long hi)
{
	_mm_storeu_si128((__m128i *)&pair, _mm_set_epi64x(hi, lo));
}

static SITE long read_high(void)
{
	return pair.high;
}

SUITE_WRITE_THEN_READ(store_pair(1, 2), read_high())

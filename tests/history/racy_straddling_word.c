// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: an 8-byte store at offset 4 (a packed struct's field) straddles
 * two granules; the other thread reads the 4-byte field at offset 8, in the
 * second granule, which the store's upper half overwrites.  A shadow that
 * records an access only in its first granule never pairs them.
 *
 * Expected: data-race in read_tail_overlap / store_middle
 */
#include "suite.h"

static struct {
	int head;
	long middle;	/* bytes 4 to 11 */
	int tail;	/* bytes 12 to 15 */
} __attribute__((packed, aligned(8))) rec;

static SITE void store_middle(long v)
{
	rec.middle = v;
}

static SITE int read_tail_overlap(void)
{
	/* Bytes 8 to 11: the upper half of middle, in the second granule. */
	return *(volatile int *)((char *)&rec + 8);
}

SUITE_WRITE_THEN_READ(store_middle(0x1122334455667788L), read_tail_overlap())

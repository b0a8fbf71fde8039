// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: two threads each store to one word once, about a millisecond
 * apart, with nothing between them.  KCSAN's protocol never sees it at
 * the defaults (assume_plain_writes_atomic: a plain word store sets no
 * watchpoint); the history does.
 *
 * Expected: "data-race in store_left / store_right"
 */
#include "suite.h"

SUITE_WRITE_WRITE_PAIR()

int main(void)
{
	run_pair(left, NULL, right, NULL);
	return mode == 0;
}

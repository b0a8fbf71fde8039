// SPDX-License-Identifier: GPL-2.0-only
/*
 * racy_many_alive.c with the racing pair created last, the 110th and the
 * 120th thread: both past the 64 clock slots, each sharing a slot with a
 * live thread, and not with each other (hb_share_slot spreads the sharers
 * over the slots).  A race between two sharers of different slots must be
 * found as between two threads of their own.
 *
 * Expected: "data-race in store_left / store_right"
 */
#define LEFT	109
#define RIGHT	119
#include "racy_many_alive.c"

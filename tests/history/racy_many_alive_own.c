// SPDX-License-Identifier: GPL-2.0-only
/*
 * racy_many_alive.c with the racing pair the 61st and 62nd threads
 * created: with main they are the 62nd and 63rd threads of the process,
 * in slots 61 and 62, which the 57 threads past the 64 slots do not share
 * (hb_share_slot fills the slots with the fewest threads from the first
 * on, slots 1 to 57 here).  Two threads with clock entries of their own,
 * among 120 alive, race: found as with few threads.
 *
 * Expected: "data-race in store_left / store_right"
 */
#define LEFT	60
#define RIGHT	61
#include "racy_many_alive.c"

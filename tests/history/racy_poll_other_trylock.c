// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a flag polled under one trylock, set under another lock
 * (racy_poll_other_lock with pthread_mutex_trylock).
 *
 * The waiter tries lock b until it has it, tests the flag, lets b go, and
 * goes round again; the publisher writes x, then sets the flag under lock
 * a.  On the loop's way back to the load the last call is the trylock,
 * and the load is reached only on its success path: a plain load that b
 * protects, not an atomic's.  The locks differ, so the flag and x race.
 * When the decoder's list of lock calls left trylocks out (it repeated
 * part of the history's table), the load was taken for a spin-wait's
 * acquire (-O2, no debug info), which ordered x = 1 before x = 2.
 *
 * Expected: "data-race in publish / wait_and_write"
 */
#define TAKE_LOCK(m) while (pthread_mutex_trylock(m))
#include "racy_poll_other_lock.c"

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: racy_poll_other_lock with one lock.
 *
 * The waiter polls the flag under lock a and writes x once it is set; the
 * publisher writes x, then sets the flag under a.  The lock orders the
 * flag's write before its read and so x = 1 before x = 2.  The decoder
 * leaves the polled load plain (its loop takes a lock first: -v "N polled
 * under a lock, left plain", the positive control), and the history's
 * model of the mutex is what orders the two.
 *
 * Expected: none
 */
#define WAITER_LOCK a
#include "racy_poll_other_lock.c"

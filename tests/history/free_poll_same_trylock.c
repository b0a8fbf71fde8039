// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: racy_poll_other_trylock with one lock.
 *
 * The waiter polls the flag under lock a, taken with
 * pthread_mutex_trylock, and writes x once it is set; the publisher writes
 * x, then sets the flag under a.  The lock orders the flag's write before
 * its read and so x = 1 before x = 2.  The decoder leaves the polled load
 * plain (the last call of its loop is a trylock: -v "N polled under a
 * lock, left plain", the positive control), and the history's model of
 * the mutex (a trylock acquires when it returns 0) is what orders the two.
 *
 * Expected: none
 */
#define TAKE_LOCK(m) while (pthread_mutex_trylock(m))
#include "free_poll_same_lock.c"

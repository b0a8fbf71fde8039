// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: free_sync_lock.c built with -g, where the debug info names
 * the lock word, a plain int.  The release is marked by its source
 * (__sync_lock_release), and the spin's read says volatile, which KCSAN
 * takes as marked: neither is a plain access to a named plain object, so
 * both stay atomic.
 *
 * Expected: race-free
 */
#include "free_sync_lock.c"

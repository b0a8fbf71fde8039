// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy twin of free_relaxed_flag_dbgfile.c: the same flags, plain ints.
 * The machine code is the same as the twin's; the debug info is what says
 * these are no atomics, and a polled plain flag is a race, as TSan says.
 *
 * The runner does not reset the flags here, so that the one racing pair is
 * the request's store and the poll.
 *
 * Expected: data-race in request_drop / run_step
 */
#define NO_RESET
#define FLAG_T int
#define FLAG_SET(f, v) ((f) = (v))
#define FLAG_GET(f) (f)
#include "free_relaxed_flag_dbgfile.c"

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: racy_watch_boundary with a barrier between the boundary's read
 * and its write.
 *
 * The reader reads the last element of the writer's chunk at its start,
 * then waits at a barrier; the writer fills its chunk but the last element
 * for 200 passes and 4 seconds at least (put() backed off by the sampler), waits at the
 * barrier, then fills it with the last.  The history's watch of the read
 * traps that write, which the barrier orders after the read: checked, and
 * silent.  The positive control is the watch's catch (-v: "N writes caught
 * by those watches and checked").
 *
 * Expected: none
 */
#include <pthread.h>

static pthread_barrier_t met;
#define MEET() pthread_barrier_wait(&met)
#define MEET_INIT() pthread_barrier_init(&met, NULL, 2)
#include "racy_watch_boundary.c"

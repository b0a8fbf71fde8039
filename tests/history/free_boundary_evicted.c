// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: racy_boundary_evicted with a barrier between the boundary's
 * read (and the reader's fill of its own chunk) and the boundary's write.
 *
 * The reader's read of chunk 0's last element is kept in the shadow
 * while the two threads fill their chunks (the reader's first read of
 * data whose writer the history has not seen, kept until the reader
 * releases: bpf/history_shadow.bpf.h, hb_kept()); the reader's release
 * at the barrier ends that, and the writer's write after the barrier is
 * ordered after the read.  The positive control: -v's "N accesses not
 * remembered, their entry keeping another granule's first read" above 0
 * (the "evict" flag of expect.tsv).
 *
 * Expected: none
 */
#include <pthread.h>

static pthread_barrier_t met;
#define MEET() pthread_barrier_wait(&met)
#define MEET_INIT() pthread_barrier_init(&met, NULL, 2)
#include "racy_boundary_evicted.c"

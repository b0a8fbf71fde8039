/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What free_fetch_add_pointer and racy_fetch_add_pointer_late_write share:
 * a release `lock add` that no probe can run ahead of, and the conditions
 * in which an acquirer catches it in flight (docs/history.md, "A locked
 * release still in flight").
 *
 * bump() releases through one of three copies of the same function, in
 * turn, each reached only through a `volatile` pointer and starting with
 * its `lock add` (built without frame pointers): no instruction of the
 * program runs into it where a probe can go, so the probe after it
 * publishes the release.  In turn, so that each release is at a site none
 * of the thread's last two late releases was at: the releaser's
 * registers can be read as in flight only at a probe known beforehand,
 * and a thread's first release at a site (a thread's first late release)
 * is then met in every round, not once a run.
 *
 * churn_mappings(): a thread that changes the process's mappings (two
 * mprotect()s of a populated region, every 200 us) while the pair runs.
 * A uprobe's trap looks its probe up under the mappings' lock when a
 * change is under way, so the releaser is held there, between its `lock
 * add` and its probe's program, as on a loaded machine: without this the
 * acquirer almost never gets there first on an idle one.  And a check of
 * the releaser that needs that lock (bpf_find_vma()) would fail here.
 */
#ifndef KCSAND_HISTORY_LATE_RELEASE_H
#define KCSAND_HISTORY_LATE_RELEASE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "suite.h"

static SITE void bump_a(atomic_long *count)
{
	atomic_fetch_add_explicit(count, 1, memory_order_release);
}

static SITE void bump_b(atomic_long *count)
{
	atomic_fetch_add_explicit(count, 1, memory_order_release);
}

static SITE void bump_c(atomic_long *count)
{
	atomic_fetch_add_explicit(count, 1, memory_order_release);
}

/* volatile: the calls stay indirect, with no direct call the decoder could probe ahead. */
static void (*volatile bumps[3])(atomic_long *) = { bump_a, bump_b, bump_c };
static __thread unsigned int bump_turn;

/* A release of count, at the next of the three sites. */
static inline void bump(atomic_long *count)
{
	bumps[bump_turn++ % 3](count);
}

#define CHURN_BYTES	(64L << 20)

static atomic_int churn_stop;
static pthread_t churn_thread;

static void *churn(void *arg)
{
	char *p = mmap(NULL, CHURN_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	while (!atomic_load_explicit(&churn_stop, memory_order_relaxed)) {
		mprotect(p, CHURN_BYTES, PROT_READ);
		mprotect(p, CHURN_BYTES, PROT_READ | PROT_WRITE);
		usleep(200);
	}
	munmap(p, CHURN_BYTES);
	return NULL;
}

static inline void churn_mappings(void)
{
	start_thread(&churn_thread, churn, NULL);
}

static inline void churn_mappings_end(void)
{
	atomic_store_explicit(&churn_stop, 1, memory_order_relaxed);
	pthread_join(churn_thread, NULL);
}

#endif

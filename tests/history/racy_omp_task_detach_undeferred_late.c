// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: free_omp_task_detach_undeferred with the fulfiller's write after
 * its omp_fulfill_event(): GOMP_task's return waits for the fulfilment and
 * nothing after it, so the creator's read races with that write.  A
 * detector that ordered the whole fulfiller before the return would miss
 * it.
 *
 * Expected: data-race in consume / produce
 */
#define FULFILLER_STEPS() (omp_fulfill_event(event), spin_us(2000), produce(42))
#define CHECK(got) ((got) != 0 && (got) != 42)	/* either, by which came first */
#include "free_omp_task_detach_undeferred.c"

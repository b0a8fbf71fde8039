// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: data published through a relaxed atomic.  The producer writes the
 * data, then bumps a flag with a relaxed fetch_add (a lock xadd); the
 * consumer waits for the flag with relaxed loads, then reads the data.
 * Relaxed operations order nothing: the read races with the write (TSan
 * reports it).  Only the source says relaxed: the instruction is the
 * same lock xadd a seq_cst fetch_add would be.
 *
 * Expected: data-race in put_data / take_data
 */
#include <sched.h>
#include <stdatomic.h>
#include "suite.h"

SUITE_SHARED(long, data, put_data, take_data)

static atomic_int ready;

static void *producer(void *arg)
{
	put_data(42);
	atomic_fetch_add_explicit(&ready, 1, memory_order_relaxed);
	return NULL;
}

static void *consumer(void *arg)
{
	while (!atomic_load_explicit(&ready, memory_order_relaxed))
		sched_yield();
	return (void *)take_data();
}

int main(void)
{
	return run_pair(producer, NULL, consumer, NULL) != (void *)42;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: C11 message passing.  The producer writes a plain message and
 * publishes it with a release store; the consumer waits for it with
 * acquire loads, reads the message, and hands the slot back the same way.
 *
 * Expected: race-free
 */
#include <sched.h>
#include <stdatomic.h>
#include "suite.h"

#define ROUNDS 200

static atomic_int full;
static long msg[4];

static SITE void write_msg(long v)
{
	int i;

	for (i = 0; i < 4; i++)
		msg[i] = v + i;
}

static SITE long read_msg(void)
{
	return msg[0] + msg[3];
}

static void *producer(void *arg)
{
	long i;

	for (i = 0; i < ROUNDS; i++) {
		while (atomic_load_explicit(&full, memory_order_acquire))
			sched_yield();
		write_msg(i);
		atomic_store_explicit(&full, 1, memory_order_release);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long i, sum = 0;

	for (i = 0; i < ROUNDS; i++) {
		while (!atomic_load_explicit(&full, memory_order_acquire))
			sched_yield();
		sum += read_msg();
		atomic_store_explicit(&full, 0, memory_order_release);
	}
	return (void *)sum;
}

int main(void)
{
	run_pair(producer, NULL, consumer, NULL);
	return 0;
}

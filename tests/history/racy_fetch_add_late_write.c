// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: free_fetch_add_message's protocol with one store on the wrong side
 * of the release.  The producer bumps `sent` (a release `lock add`), then
 * writes the message's second word; the consumer, which waited for `sent`
 * with an acquire load, reads both words.  The late store is not ordered
 * before the read: a release published early must not cover what the
 * thread does after the `lock add`.
 *
 * Expected: data-race in read_msg / write_late
 */
#include <sched.h>
#include <stdatomic.h>
#include "suite.h"

#define ROUNDS 100

static atomic_long sent, taken;
static long msg[2];

static SITE void write_late(long v)
{
	msg[1] = v;
}

static SITE void send_msg(long v)
{
	msg[0] = v;
	atomic_fetch_add_explicit(&sent, 1, memory_order_release);
	write_late(v + 1);
}

static SITE long read_msg(void)
{
	return msg[0] + msg[1];
}

static SITE long wait_for(atomic_long *count, long n)
{
	long c;

	while ((c = atomic_load_explicit(count, memory_order_acquire)) < n)
		sched_yield();
	return c;
}

static void *producer(void *arg)
{
	for (long i = 0; i < ROUNDS; i++) {
		wait_for(&taken, i);
		send_msg(i);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long sum = 0;

	for (long i = 0; i < ROUNDS; i++) {
		wait_for(&sent, i + 1);
		sum += read_msg();
		atomic_fetch_add_explicit(&taken, 1, memory_order_release);
	}
	return (void *)sum;
}

int main(void)
{
	return run_pair(producer, NULL, consumer, NULL) == NULL;
}

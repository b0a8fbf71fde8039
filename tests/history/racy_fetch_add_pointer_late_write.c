// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: free_fetch_add_pointer's protocol (a release `lock add` reached
 * only through a pointer, published late, at a site none of the thread's
 * last two late releases was at: late_release.h) with one store on the
 * wrong side of the release.  The producer bumps `sent`, then writes the
 * message's second word; the consumer, which waited for `sent` with an
 * acquire load, reads both words.  An acquirer ordered by the release in
 * flight takes the epoch the `lock add` releases, not the store after it;
 * the message's first word, written before the release, is not reported
 * (read_msg / send_msg).
 *
 * Not while the mappings churn, as free_fetch_add_pointer does: a write
 * then often runs out of line well after its probe, and the watchpoints
 * report the real race a second way (a race of unknown origin, or its
 * escalation's later write at the out-of-line slot), 2 runs of 40 here,
 * which this suite would count as a wrong title.
 *
 * Expected: data-race in read_msg / write_late
 */
#include <sched.h>
#include "late_release.h"

#define ROUNDS 1000

static atomic_long sent, taken;
static long msg[2];

static SITE void write_late(long v)
{
	msg[1] = v;
}

static SITE void send_msg(long v)
{
	msg[0] = v;
	bump(&sent);
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
		bump(&taken);
	}
	return (void *)sum;
}

int main(void)
{
	return run_pair(producer, NULL, consumer, NULL) == NULL;
}

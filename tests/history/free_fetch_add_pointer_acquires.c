// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: free_fetch_add_pointer, with the consumer reading six other
 * atomics (acquire loads: status words a real consumer checks) between its
 * acquire of the count and its read of the message.  A release in flight
 * is matched with the acquires the acquirer made in its window; with only
 * its last 4 acquires kept, the count's was gone by the read, and the
 * message was reported as `read_msg / send_msg`.
 *
 * What follows is free_fetch_add_pointer's own description:
 * free_fetch_add_message's protocol, with the releases made by
 * functions reached only through a pointer, whose first instruction is
 * the release's `lock add` (late_release.h).  No instruction of the
 * program runs into it where a probe can go, so no probe publishes its
 * release ahead of it: the probe after it publishes it, when the other
 * thread may have read the count and acquired already.  That acquirer must
 * still be ordered after the message (a release in flight, docs/history.md),
 * or the message is reported as `read_msg / send_msg`.
 *
 * No warm-up: each thread's first late release, and every later one, is
 * at a site none of its last two late releases was at, and a thread
 * changes the mappings meanwhile (late_release.h says why both).  Before
 * the probes after locked releases were known from the decode, the
 * message was reported in every run of this program here.
 *
 * Built without frame pointers, so that the `lock add` is its function's
 * first instruction.  Many rounds, so that the run leaves the cold start.
 *
 * Expected: race-free
 */
#include <sched.h>
#include "late_release.h"

static long rounds = 5000;
static atomic_long sent, taken;
static long msg[2], got;
static atomic_long status[6];

static SITE void send_msg(long v)
{
	msg[0] = v;
	msg[1] = v + 1;
	bump(&sent);
}

static SITE long read_msg(void)
{
	return msg[0] + msg[1];
}

static SITE void take_msg(long v)
{
	got = v;
	bump(&taken);
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
	for (long i = 0; i < rounds; i++) {
		wait_for(&taken, i);
		send_msg(i);
	}
	return NULL;
}

/* Six acquires of other objects, none released: the count's is no longer among the last 4. */
static SITE long check_status(void)
{
	long s = 0;

	for (int j = 0; j < 6; j++)
		s += atomic_load_explicit(&status[j], memory_order_acquire);
	return s;
}

static void *consumer(void *arg)
{
	long sum = 0;

	for (long i = 0; i < rounds; i++) {
		wait_for(&sent, i + 1);
		sum += check_status();
		sum += read_msg();
		take_msg(sum);
	}
	return (void *)sum;
}

int main(int argc, char **argv)
{
	long sum;

	if (argc > 1)
		rounds = atol(argv[1]);
	churn_mappings();
	sum = (long)run_pair(producer, NULL, consumer, NULL);
	churn_mappings_end();
	return sum != rounds * rounds;
}

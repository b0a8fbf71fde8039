// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: free_fetch_add_message's protocol, with the releases made by
 * a function reached only through a pointer, whose first instruction is
 * the release's `lock add`.  No instruction of the program runs into it
 * where a probe can go, so no probe publishes its release ahead of it:
 * the probe after it publishes it, when the other thread may have read
 * the count and acquired already.  That acquirer must still be ordered
 * after the message (a release in flight, docs/history.md), or the
 * message is reported as `read_msg / send_msg`.
 *
 * Built without frame pointers, so that the `lock add` is bump()'s first
 * instruction.  Many rounds, so that the run leaves the cold start.
 *
 * Each thread makes one late release of its own first (warm_up()): a
 * thread's first late release of a site, caught before its probe ran, is
 * the case the history still misses (docs/history.md, "What it still
 * misses"): with nothing known of that probe, the stopped releaser's
 * registers cannot be read as in flight.  Without the warm-up the message
 * was reported once in a quiet CI run (ci-G), after 1.5 s: most likely in
 * an early round, before either thread had made a late release.
 *
 * Expected: race-free
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "suite.h"

static long rounds = 20000;
static atomic_long sent, taken;
static long msg[2], got;

static SITE void bump(atomic_long *count)
{
	atomic_fetch_add_explicit(count, 1, memory_order_release);
}

/* volatile: the calls stay indirect, with no direct call the decoder could probe ahead. */
static void (*volatile bump_fn)(atomic_long *) = bump;

static SITE void send_msg(long v)
{
	msg[0] = v;
	msg[1] = v + 1;
	bump_fn(&sent);
}

static SITE long read_msg(void)
{
	return msg[0] + msg[1];
}

static SITE void take_msg(long v)
{
	got = v;
	bump_fn(&taken);
}

/* This thread's first late release, of a counter nobody waits on (above). */
static atomic_long warm;

static SITE void warm_up(void)
{
	bump_fn(&warm);
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
	warm_up();
	for (long i = 0; i < rounds; i++) {
		wait_for(&taken, i);
		send_msg(i);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long sum = 0;

	warm_up();
	for (long i = 0; i < rounds; i++) {
		wait_for(&sent, i + 1);
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
	sum = (long)run_pair(producer, NULL, consumer, NULL);
	return sum != rounds * rounds;
}

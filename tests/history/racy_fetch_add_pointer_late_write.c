// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: free_fetch_add_pointer's protocol (a release `lock add` reached
 * only through a pointer, published late) with one store on the wrong
 * side of the release.  The producer bumps `sent`, then writes the
 * message's second word; the consumer, which waited for `sent` with an
 * acquire load, reads both words.  An acquirer ordered by the release in
 * flight takes the epoch the `lock add` releases, not the store after it.
 * Each thread makes one late release first (warm_up()), as in
 * free_fetch_add_pointer: without it, the first report was once the
 * message's first word (read_msg / send_msg), the case the history still
 * misses, a thread's first late release caught before its probe ran.
 *
 * Expected: data-race in read_msg / write_late
 */
#include <sched.h>
#include <stdatomic.h>
#include "suite.h"

#define ROUNDS 100

static atomic_long sent, taken;
static long msg[2];

static SITE void bump(atomic_long *count)
{
	atomic_fetch_add_explicit(count, 1, memory_order_release);
}

static void (*volatile bump_fn)(atomic_long *) = bump;

static SITE void write_late(long v)
{
	msg[1] = v;
}

static SITE void send_msg(long v)
{
	msg[0] = v;
	bump_fn(&sent);
	write_late(v + 1);
}

static SITE long read_msg(void)
{
	return msg[0] + msg[1];
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
	for (long i = 0; i < ROUNDS; i++) {
		wait_for(&taken, i);
		send_msg(i);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long sum = 0;

	warm_up();
	for (long i = 0; i < ROUNDS; i++) {
		wait_for(&sent, i + 1);
		sum += read_msg();
		bump_fn(&taken);
	}
	return (void *)sum;
}

int main(void)
{
	return run_pair(producer, NULL, consumer, NULL) == NULL;
}

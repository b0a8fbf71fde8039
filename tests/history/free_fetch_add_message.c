// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: message passing with fetch_add, release and acquire, as a
 * ring's producer and consumer count what they published and took.  The
 * producer writes the message, then bumps `sent` (a release `lock add`);
 * the consumer waits with acquire loads until `sent` moves, reads the
 * message, then bumps `taken` the same way, which the producer waits for
 * before writing the next one.
 *
 * x86 uprobes refuse the lock prefix, so a locked RMW is probed at the
 * next instruction, after the other CPU can see what it wrote: a consumer
 * that read it and acquired before that probe published the release
 * found none, and was reported as `read_msg / write_msg` in 3 of 6 runs.
 * Each of send_msg's and take_msg's last store comes right before its
 * lock add, so both probes of that release share an instruction.  Many
 * rounds, so that the run leaves the cold start (seconds under kcsand).
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

static SITE void send_msg(long v)
{
	msg[0] = v;
	msg[1] = v + 1;
	atomic_fetch_add_explicit(&sent, 1, memory_order_release);
}

static SITE long read_msg(void)
{
	return msg[0] + msg[1];
}

static SITE void take_msg(long v)
{
	got = v;
	atomic_fetch_add_explicit(&taken, 1, memory_order_release);
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

static void *consumer(void *arg)
{
	long sum = 0;

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

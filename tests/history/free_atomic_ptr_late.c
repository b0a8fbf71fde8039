// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: free_atomic_ptr's message passing through an _Atomic flag
 * reached through a pointer (a `mov; mfence` store, a plain-mov load), but
 * the consumer polls the flag alone for a while before the producer's
 * first store: a worker waiting for its first job.  Its polling site is
 * hot and backed off by the sampler before any fenced store has taught
 * the flag's address, so a hit of it never learns that the load is an
 * atomic's: the fenced store must, from the consumer's plain reads it
 * finds at that address, and the consumer must acquire the flag until that
 * site is armed again.  Reported as read_msg / write_msg every run before.
 *
 * Expected: race-free
 */
#include <sched.h>
#include <stdatomic.h>
#include "suite.h"

#define ROUNDS 2000

static atomic_int flag_storage;
static atomic_int *volatile flagp = &flag_storage;
static long msg[2];

static SITE void write_msg(long v)
{
	msg[0] = v;
	msg[1] = v + 1;
}

static SITE long read_msg(void)
{
	return msg[0] + msg[1];
}

static SITE __attribute__((target("tune=k8"))) void set_flag(atomic_int *f, int v)
{
	*f = v;		/* seq_cst: mov; mfence */
}

static SITE int get_flag(atomic_int *f)
{
	return *f;	/* seq_cst load: a plain mov */
}

static void *producer(void *arg)
{
	/* Long enough for the consumer's poll to leave the sampler's cold start. */
	spin_us(1500000);
	for (long i = 0; i < ROUNDS; i++) {
		while (get_flag(flagp))
			sched_yield();
		write_msg(i);
		set_flag(flagp, 1);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long sum = 0;

	for (long i = 0; i < ROUNDS; i++) {
		while (!get_flag(flagp))
			sched_yield();
		sum += read_msg();
		set_flag(flagp, 0);
	}
	return (void *)sum;
}

int main(void)
{
	long sum = (long)run_pair(producer, NULL, consumer, NULL);

	return sum != (long)ROUNDS * ROUNDS;
}

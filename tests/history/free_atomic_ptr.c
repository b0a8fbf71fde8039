// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: message passing through an _Atomic flag reached through a
 * pointer.  The seq_cst store compiles to `mov; mfence` (gcc's code for
 * K8-tuned builds, asked for set_flag alone) and the seq_cst load to a
 * plain mov, through a register, so neither the instruction nor the
 * variable's name shows the atomic.  The producer writes a plain
 * message, then sets the flag; the consumer waits for the flag, reads the
 * message, and clears the flag.
 *
 * Expected: race-free
 */
#include <sched.h>
#include <stdatomic.h>
#include "suite.h"

#ifndef ROUNDS
#define ROUNDS 10000
#endif
/* How long the producer waits before its first round (free_atomic_ptr_late.c). */
#ifndef PRODUCER_LATE_US
#define PRODUCER_LATE_US 0
#endif

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
	if (PRODUCER_LATE_US)
		spin_us(PRODUCER_LATE_US);
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

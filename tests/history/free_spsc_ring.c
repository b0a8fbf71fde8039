// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a lock-free single-producer single-consumer ring, as audio,
 * logging and packet code has one.  The producer fills a plain slot, then
 * publishes it by a release store of the head index; the consumer sees the
 * head by an acquire load, reads the slot, and returns it by a release
 * store of the tail, which the producer reads with an acquire load before
 * it fills the slot again.  No lock-prefixed instruction touches either
 * index: on x86 both are plain movs, and built -O2 without -g nothing but
 * the program's behaviour says that they are atomics.
 *
 * Expected: race-free
 */
#include <sched.h>
#include <stdatomic.h>
#include "suite.h"

#define SLOTS 64
#define ITEMS 20000L

struct slot {
	long seq;
	long data[3];
};

static struct slot ring[SLOTS];
static _Atomic unsigned long head, tail;

static SITE void fill_slot(struct slot *s, long i)
{
	s->seq = i;
	s->data[0] = i * 3;
	s->data[1] = i ^ 0x55;
	s->data[2] = -i;
}

static SITE long read_slot(const struct slot *s)
{
	return s->seq + s->data[0] + s->data[1] + s->data[2];
}

static void *producer(void *arg)
{
	unsigned long h = 0;

	for (long i = 0; i < ITEMS; i++, h++) {
		while (h - atomic_load_explicit(&tail, memory_order_acquire) == SLOTS)
			sched_yield();
		fill_slot(&ring[h % SLOTS], i);
		atomic_store_explicit(&head, h + 1, memory_order_release);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	unsigned long t = 0;
	long sum = 0;

	for (long i = 0; i < ITEMS; i++, t++) {
		while (atomic_load_explicit(&head, memory_order_acquire) == t)
			sched_yield();
		sum += read_slot(&ring[t % SLOTS]);
		atomic_store_explicit(&tail, t + 1, memory_order_release);
	}
	return (void *)sum;
}

int main(void)
{
	long want = 0;

	for (long i = 0; i < ITEMS; i++)
		want += i + i * 3 + (i ^ 0x55) - i;
	if ((long)run_pair(producer, NULL, consumer, NULL) != want) {
		fprintf(stderr, "the ring lost an item\n");
		return 1;
	}
	return 0;
}

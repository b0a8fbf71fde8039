// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: the lock-free ring of free_spsc_ring.c, built the same way (-O2,
 * no -g), whose producer fills one slot's last word after it published the
 * slot by the release store of the head.  The consumer reads that word
 * after its acquire load saw the head: nothing orders the late store with
 * the read.  It happens once, early (while every site is armed) but long after the
 * spin-wait loads taught the indices' addresses: a spin-wait acquire must
 * order what came before the release, not what came after it.
 *
 * Expected: data-race in read_slot / write_late
 */
#include <sched.h>
#include <stdatomic.h>
#include "suite.h"

#define SLOTS 64
#define ITEMS 2000L
#define LATE 100

struct slot {
	long seq;
	long data[3];
};

static struct slot ring[SLOTS];
static _Atomic unsigned long head, tail;

static SITE void fill_slot(struct slot *s, long i, int last)
{
	s->seq = i;
	s->data[0] = i * 3;
	s->data[1] = i ^ 0x55;
	if (last)
		s->data[2] = -i;
}

static SITE void write_late(struct slot *s, long i)
{
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
		/* The consumer takes the late slot with nothing published after it. */
		while (i == LATE && atomic_load_explicit(&tail, memory_order_acquire) != h)
			sched_yield();
		fill_slot(&ring[h % SLOTS], i, i != LATE);
		atomic_store_explicit(&head, h + 1, memory_order_release);
		if (i == LATE) {
			write_late(&ring[h % SLOTS], i);
			while (atomic_load_explicit(&tail, memory_order_acquire) != h + 1)
				sched_yield();
		}
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
	run_pair(producer, NULL, consumer, NULL);
	return 0;
}

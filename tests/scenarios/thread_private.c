// SPDX-License-Identifier: GPL-2.0-only
/*
 * Each thread reads and writes only its own slot; the slots sit in
 * separate cache lines of one page.  Both threads set watchpoints, with
 * the same code, at nearby addresses, but the accessed ranges never
 * overlap, so nothing may ever be reported.
 *
 * gcc 12 -O1:  slot_inc:  addq $0x1,(%rdi)    (plain 8-byte RMW, watches)
 *              slot_read: mov (%rdi),%rax     (plain 8-byte load, watches)
 */
#include "scenario.h"

/* Race-free: about 3 s under kcsand (two probed accesses per iteration). */
#define ITERS 50000

struct slot {
	long v;
} __attribute__((aligned(64)));

struct slot slots[2];

RACY void slot_inc(struct slot *s)
{
	s->v++;
}

RACY long slot_read(struct slot *s)
{
	return s->v;
}

static long iters;	/* Set before the threads start, then only read. */

static void *thread_main(void *arg)
{
	struct slot *s = arg;
	long i, n = iters;

	wait_for_start();
	for (i = 0; i < n; i++) {
		slot_inc(s);
		slot_read(s);
		barrier();
	}
	return NULL;
}

int main(void)
{
	pthread_t tid[2];
	int i;

	iters = scenario_iters(ITERS);
	pthread_barrier_init(&start_line, NULL, 2);
	for (i = 0; i < 2; i++)
		pthread_create(&tid[i], NULL, thread_main, &slots[i]);
	for (i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	return slots[0].v == iters && slots[1].v == iters ? 0 : 1;
}

/* kcsand-test: name=thread_private expect=none */

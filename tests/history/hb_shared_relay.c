// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free, and past the history's 64 clock slots: more threads alive at
 * once than a process has slots, so the last ones created share a slot
 * with a live thread (bpf/history_clock.bpf.h, hb_share_slot).  One of
 * them, the relay, orders a write and a read of two threads that have
 * slots of their own, created first: the writer writes once the relay
 * exists and posts go, the relay waits for it and posts relayed, the
 * reader waits for that and reads.  Until 2026-12-07 the relay had no
 * clock, its sync went untraced, and the history's report of the write
 * and the read (`data-race in read_x / write_x`) had to be dropped with
 * every other; now the relay's sync is traced on its shared slot, and the
 * order it makes must be seen: no report, none dropped.
 *
 * The writer stays alive until the reader read, so that the relay cannot
 * take a slot the writer left.
 *
 * Expected: race-free, with threads in shared slots and none without a clock.
 */
#include <pthread.h>
#include <semaphore.h>

#define SITE __attribute__((noinline, noipa))
#define FILLERS 70	/* with main, writer and reader: past the 64 slots */

static long x;
static sem_t start, go, relayed, gate;

static SITE void write_x(long v)
{
	x = v;
}

static SITE long read_x(void)
{
	return x;
}

static void *writer(void *arg)
{
	(void)arg;
	sem_wait(&start);
	write_x(42);
	sem_post(&go);
	sem_wait(&gate);	/* keeps its slot until the reader read */
	return NULL;
}

static void *relay(void *arg)
{
	(void)arg;
	sem_wait(&go);
	sem_post(&relayed);
	return NULL;
}

static void *reader(void *arg)
{
	sem_wait(&relayed);
	*(long *)arg = read_x();
	return NULL;
}

static void *filler(void *arg)
{
	(void)arg;
	sem_wait(&gate);
	return NULL;
}

int main(void)
{
	pthread_t w, r, rl, f[FILLERS];
	long got = 0;
	int i;

	sem_init(&start, 0, 0);
	sem_init(&go, 0, 0);
	sem_init(&relayed, 0, 0);
	sem_init(&gate, 0, 0);
	/* The reader and the writer take slots first; the relay comes last. */
	if (pthread_create(&r, NULL, reader, &got) || pthread_create(&w, NULL, writer, NULL))
		return 2;
	for (i = 0; i < FILLERS; i++)
		if (pthread_create(&f[i], NULL, filler, NULL))
			return 2;
	if (pthread_create(&rl, NULL, relay, NULL))
		return 2;
	sem_post(&start);
	pthread_join(r, NULL);
	pthread_join(rl, NULL);
	for (i = 0; i < FILLERS + 1; i++)
		sem_post(&gate);
	pthread_join(w, NULL);
	for (i = 0; i < FILLERS; i++)
		pthread_join(f[i], NULL);
	return got != 42;
}

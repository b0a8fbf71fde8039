// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free, and past the history's 64 clock slots: more threads alive at
 * once than a process has slots, so the last ones created have no clock.
 * One of them, the relay, orders a write and a read of two threads that
 * do have one, created first: the writer writes once the relay exists and
 * posts go, the relay waits for it and posts relayed, the reader waits for
 * that and reads.  The relay's sync is not
 * traced, so the history alone would report the write and the read as a
 * race; kcsand must drop what the history finds once a thread went
 * without a clock, and say so.
 *
 * The writer stays alive until the reader read: a thread's slot is free
 * once it ended, and the relay's next event would take it, as a thread
 * first seen at an event, which acquires every epoch (the writer's write
 * with it) and then releases into relayed: ordered, nothing to drop.
 * That happened whenever the writer ended before the relay woke, 2 runs
 * of 3 here.
 *
 * Expected: race-free, with the history's report dropped and counted.
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

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: heap memory that one thread writes and frees, and that malloc
 * hands to a later thread, which writes it too.  The two threads never
 * synchronize: they are detached, and the second is created while the
 * first may still run.  The allocator's own locking orders the free before
 * the malloc that returns the block, so the second write is no race; a
 * detector that does not forget a freed block reports the two writes.
 *
 * glibc gives each thread an arena; a thread's arena and its cached blocks
 * go to the next new thread once it exits, so the blocks are reused across
 * threads.  Fewer threads than the history's 64 clock slots, each doing
 * many allocations, so that the run leaves the sampler's cold start.
 *
 * Expected: race-free
 */
#include <stdint.h>
#include <dirent.h>
#include <unistd.h>
#include "suite.h"

#define THREADS	40
#define ROUNDS	320
#define BLOCKS	8

static SITE void fill(long *block, long v)
{
	for (int i = 0; i < 8; i++)
		block[i] = v;
}

static void *owner(void *arg)
{
	long *block[BLOCKS];

	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < BLOCKS; i++) {
			block[i] = malloc(64);
			if (!block[i])
				exit(2);
			fill(block[i], (long)arg + i);
		}
		for (int i = 0; i < BLOCKS; i++)
			free(block[i]);
		/* Work of its own, which earns the sync probes their share of the budget. */
		spin_us(100);
	}
	return NULL;
}

/* Wait until the process has one thread left, reading /proc (no sync function). */
static void wait_alone(void)
{
	for (;;) {
		DIR *d = opendir("/proc/self/task");
		int n = 0;

		if (!d)
			exit(2);
		while (readdir(d))
			n++;
		closedir(d);
		if (n <= 3)	/* ".", ".." and the main thread */
			return;
		usleep(1000);
	}
}

int main(void)
{
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (long t = 0; t < THREADS; t++) {
		pthread_t th;

		if (pthread_create(&th, &attr, owner, (void *)t))
			return 2;
		/* Not a synchronization kcsand sees: the thread ended, its resources are free. */
		wait_alone();
	}
	return 0;
}

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
#include "suite.h"

#define THREADS	40
#define ROUNDS	320	/* suite_rounds(): a tenth in the run with every site armed */
#define BLOCKS	8

static SITE void fill(long *block, long v)
{
	for (int i = 0; i < 8; i++)
		block[i] = v;
}

static void *owner(void *arg)
{
	long *block[BLOCKS];

	for (int r = 0, n = suite_rounds(ROUNDS); r < n; r++) {
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

int main(void)
{
	return run_detached_in_turn(owner, THREADS);
}

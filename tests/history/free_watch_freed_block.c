// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a heap block read by one thread, freed by a second, and
 * handed by malloc to a third.  The reader reads a word nobody was seen
 * writing (memset, in libc): the history watches it for another thread's
 * write.  The freer frees the block; glibc's free writes its list
 * pointers into it.  Later, with no synchronization the history sees (the
 * allocator's own lock orders the reuse), the main thread mallocs the same
 * block and writes it.  The watch of the read must go with the memory:
 * while it stayed, it caught free's write, the history remembered that
 * write, and the main thread's was reported against it as `_int_free /
 * put` (3 runs of 3 before).  The positive control: a watch spent with
 * the memory it watched (-v: "N spent unchecked with the memory they
 * watched").  Exit 1 if malloc did not hand the block back (glibc 2.36: a
 * freed 2 KiB chunk, past the tcache, is the next exact fit).
 *
 * Expected: race-free
 */
#include <string.h>
#include "suite.h"

struct msg {
	long first;
	long rest[255];	/* 2 KiB: past the tcache, into the arena's bins */
};

static struct msg *blk[2];
static pthread_barrier_t read_done;

static SITE long take(const struct msg *m)
{
	return m->first;
}

static SITE void put(struct msg *m, long v)
{
	m->first = v;
}

static void *reader(void *arg)
{
	long v = take(blk[0]);

	pthread_barrier_wait(&read_done);
	return (void *)v;
}

static void *freer(void *arg)
{
	pthread_barrier_wait(&read_done);
	sleep(2);		/* the watches' program is in, the read's watch armed */
	free(blk[0]);		/* blk[1] stays: the chunk does not merge with the top */
	return NULL;
}

int main(void)
{
	pthread_t r, f;
	struct msg *m;

	for (int i = 0; i < 2; i++) {
		blk[i] = malloc(sizeof(struct msg));
		memset(blk[i], 0, sizeof(struct msg));
	}
	pthread_barrier_init(&read_done, NULL, 2);
	start_thread(&r, reader, NULL);
	start_thread(&f, freer, NULL);
	sleep(3);		/* no synchronization with the freer */
	m = malloc(sizeof(struct msg));
	put(m, 1);
	pthread_join(r, NULL);
	pthread_join(f, NULL);
	return m != blk[0];
}

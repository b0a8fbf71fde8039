// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a chunk's boundary read, then a million-hit loop's worth of other
 * granules, then the boundary's write.
 *
 * DataRaceBench's DRB031 and DRB032 in small (a stencil over neighbouring
 * chunks of a parallel loop): the reader reads the last element of the
 * writer's chunk once, at its start, then fills its own chunk; the writer
 * fills its chunk but that element, then writes it last.  Between the read
 * and the write, the two threads touch NCHUNK * 2 other granules, four
 * times the shadow's 65,536 entries: each a shadow entry taken over, so
 * that a direct-mapped shadow had forgotten the read when the write came
 * (run with every site armed and no watch, "evict" in expect.tsv, the
 * shadow alone decides).  The writer's fill lasts FILL_NS at least, so
 * that at the defaults its last write comes after the sampler has backed
 * put() off and the history's watches are in.  Nothing orders the read and
 * the write.
 *
 * Expected: "data-race in put / take"
 */
#include "suite.h"

/* Each thread's chunk: 1 MiB, 131,072 granules. */
#define NCHUNK (1 << 17)
#define FILL_NS 2000000000L

#ifndef MEET
#define MEET()
#define MEET_INIT()
#endif

static long a[2 * NCHUNK];

static SITE void put(long i, long v)
{
	a[i] = v;
}

static SITE long take(long i)
{
	return a[i];
}

/* Chunk 0, the boundary (its last element) written last. */
static void *writer(void *arg)
{
	long t0 = now_ns(), pass = 0;

	do {
		for (long i = 0; i < NCHUNK - 1; i++)
			put(i, pass);
		pass++;
	} while (now_ns() - t0 < FILL_NS);
	MEET();
	put(NCHUNK - 1, pass);
	return NULL;
}

/* Chunk 1, after a read of chunk 0's last element, as a stencil's first row reads its neighbour's last. */
static void *reader(void *arg)
{
	long v = take(NCHUNK - 1);

	for (long i = NCHUNK; i < 2 * NCHUNK; i++)
		put(i, v);
	MEET();
	return NULL;
}

int main(void)
{
	MEET_INIT();
	run_pair(reader, NULL, writer, NULL);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a chunk's boundary written last, at a site the sampler has backed off.
 *
 * The shape of a parallel loop whose neighbour reads across its chunk's
 * edge (DataRaceBench's DRB014 and DRB031): the reader reads the last
 * element of the writer's chunk once, at its start; the writer fills its
 * chunk for 200 passes and 4 seconds at least, every element but the last, then once more
 * with the last.  By then put() has been hit millions of times and the
 * sampler has backed it off, so that write is not probed: only the
 * history's watch of the read (a write breakpoint in the other threads)
 * sees it.  Nothing orders the read and the write.
 *
 * Expected: "data-race in take / put", the put side seen by a debug register.
 */
#include "suite.h"

#define N 256
/* Long enough for put() to use up the cold start's credit, and for the watch to be armed. */
#define FILL_PASSES 200
#define FILL_NS 4000000000L

static long a[N];

/*
 * Where the threads meet between the read and the last write: nowhere here; at a
 * barrier in free_watch_boundary.c, which defines these before including this.
 */
#ifndef MEET
#define MEET()
#define MEET_INIT()
#endif

static SITE void put(int i, long v)
{
	a[i] = v;
}

static SITE long take(int i)
{
	return a[i];
}

static void *writer(void *arg)
{
	long t0 = now_ns(), pass = 0;

	while (pass < FILL_PASSES || now_ns() - t0 < FILL_NS) {
		for (int i = 0; i < N - 1; i++)
			put(i, pass);
		pass++;
	}
	MEET();
	for (int i = 0; i < N; i++)
		put(i, pass);
	return NULL;
}

static void *reader(void *arg)
{
	long v = take(N - 1);

	MEET();
	return (void *)v;
}

int main(void)
{
	MEET_INIT();
	run_pair(reader, NULL, writer, NULL);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: two threads store to the low half of one 8-byte word, and the main
 * thread reads the high half, a byte at a time, in between.
 *
 * The history remembers 4 accesses per 8-byte granule.  Here they are all
 * taken when the main thread comes back to the word: its own two stores
 * and the worker's read and store, the last unordered.  Each of its byte
 * reads needs a cell and has none of its own to take (a read does not
 * stand for a write, nor one byte for another).  A random pick took the
 * worker's store's cell in most runs, and the main thread's store that
 * follows found no race; DataRaceBench's DRB009 missed its race the same
 * way in 1 run of 4 (its data block is x and len).  The pick now prefers
 * the thread's own cells.
 *
 * Expected: "data-race in put_low / put_low"
 */
#include "suite.h"

static union {
	unsigned long word;
	struct {
		int low;
		unsigned char high[4];
	};
} block __attribute__((aligned(8)));

static SITE void put_low(int v)
{
	block.low = v;
}

static SITE void put_high(int v)
{
	*(int *)block.high = v;
}

static SITE int get_high(int i)
{
	return block.high[i];
}

static SITE int get_high_all(void)
{
	return *(int *)block.high;
}

static void *worker(void *arg)
{
	put_low(get_high_all());
	return NULL;
}

int main(void)
{
	pthread_t t;
	int i, sum = 0;

	put_high(8);
	put_low(0);
	start_thread(&t, worker, NULL);
	/* The worker's read and store are in before the main thread comes back; no sync. */
	wait_alone();
	for (i = 0; i < 16; i++)
		sum += get_high(i & 3);
	put_low(sum);
	pthread_join(t, NULL);
	printf("%d\n", block.low);
	return 0;
}

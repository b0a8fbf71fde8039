// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: two threads each store to one word once, about a millisecond
 * apart, with nothing between them.  KCSAN's protocol never sees it at
 * the defaults (assume_plain_writes_atomic: a plain word store sets no
 * watchpoint); the history does.
 *
 * Expected: "data-race in store_left / store_right"
 */
#include <pthread.h>
#include <time.h>

#define SITE __attribute__((noinline, noipa))

static long mode;

static SITE void store_left(void)
{
	mode = 1;
}

static SITE void store_right(void)
{
	mode = 2;
}

/* About us microseconds of the thread's own time, touching nothing shared. */
static void spin_us(long us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static void *left(void *arg)
{
	store_left();
	return NULL;
}

static void *right(void *arg)
{
	spin_us(1000);
	store_right();
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	if (pthread_create(&a, NULL, left, NULL) || pthread_create(&b, NULL, right, NULL))
		return 2;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return mode == 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: data handed to a thread by pthread_create and back by
 * pthread_join.  Main writes, the thread reads and writes, main reads after
 * the join; twenty times, with a new thread each time.
 *
 * Expected: race-free
 */
#include "suite.h"

#define ROUNDS 20

static long data;

static SITE void set_data(long v)
{
	data = v;
}

static SITE long get_data(void)
{
	return data;
}

static void *child(void *arg)
{
	set_data(get_data() * 2);
	return NULL;
}

int main(void)
{
	long i, sum = 0;
	pthread_t t;

	for (i = 0; i < ROUNDS; i++) {
		set_data(i);
		start_thread(&t, child, NULL);
		pthread_join(t, NULL);
		sum += get_data();
	}
	printf("%ld\n", sum);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a thread is handed a pointer to its creator's local, and the
 * creator (itself a thread) writes the local again before joining.  Built
 * without frame pointers, the creator's write is rsp-relative: a stack access, probed
 * only because the local's address escapes to pthread_create
 * (daemon/sites/escape.c).
 *
 * Expected: data-race in read_shared / start_and_update
 */
#include "suite.h"

static SITE void *read_shared(void *arg)
{
	return (void *)(long)*(volatile int *)arg;
}

static SITE void *start_and_update(void *unused)
{
	pthread_t t;
	void *got;
	int x = 1;

	if (pthread_create(&t, NULL, read_shared, &x))
		return NULL;
	*(volatile int *)&x = 2;
	pthread_join(t, &got);
	return got;
}

int main(void)
{
	pthread_t t;
	void *got = NULL;

	if (pthread_create(&t, NULL, start_and_update, NULL))
		return 1;
	pthread_join(t, &got);
	return got == NULL;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: a flag set without a lock and read once by another thread.
 *
 * One thread raises the flag after some work; the other checks it once,
 * after work of its own.  Nothing orders the two accesses, whichever comes
 * first.
 *
 * Expected: "data-race in check_flag / raise_flag"
 */
#include "suite.h"

static int done;

static SITE void raise_flag(void)
{
	done = 1;
}

static SITE int check_flag(void)
{
	return done;
}

static void *worker(void *arg)
{
	spin_us(200);
	raise_flag();
	return NULL;
}

static void *watcher(void *arg)
{
	spin_us(1000);
	return (void *)(long)check_flag();
}

int main(void)
{
	run_pair(worker, NULL, watcher, NULL);
	return 0;
}

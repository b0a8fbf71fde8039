// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: `while (!stop) work();` on a plain flag, built -O2 without -g, as
 * a worker loop is written.  Main changes the worker's configuration and
 * then sets stop; the worker's work() reads the configuration in the
 * iteration whose poll of stop had read 0.  Nothing orders the change with
 * that read: stop was read before main set it.
 *
 * Without debug info the polled flag is taken for an atomic (the spin-wait
 * rule, daemon/sites/spinwait.c), and its acquire was taken at the thread's
 * next event, here the read inside work(), after main had set stop: the
 * race was ordered away.  The second work() sleeps before its read, so
 * that main's change and release come between the loop's poll (gcc -O2
 * polls once before the loop, and at its bottom) and the read every run.
 *
 * Expected: data-race in read_config / set_config
 */
#include <semaphore.h>
#include "suite.h"

static int stop;		/* plain: main sets it, the worker polls it */
static long config;		/* plain: main changes it while work() may read it */
static sem_t started;		/* orders the worker before main, not main before the worker */

static SITE long read_config(void)
{
	return config;
}

static SITE void set_config(long v)
{
	config = v;
}

static SITE long work(long i)
{
	if (i != 1)
		return i;
	usleep(200 * 1000);	/* no access, no sync: main acts meanwhile */
	return read_config();
}

static void *worker(void *arg)
{
	long sum = 0, i = 0;

	sem_post(&started);
	while (!stop)
		sum += work(i++);
	return (void *)sum;
}

int main(void)
{
	pthread_t t;

	sem_init(&started, 0, 0);
	start_thread(&t, worker, NULL);
	sem_wait(&started);
	usleep(50 * 1000);	/* the worker is in its second work() by now */
	set_config(42);
	stop = 1;
	pthread_join(t, NULL);
	return 0;
}

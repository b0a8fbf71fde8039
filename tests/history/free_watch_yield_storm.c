// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: threads that switch all the time while a watch of a read is
 * armed in them.
 *
 * Three threads (one more than this project's machines have CPUs) each
 * read a table nobody wrote, a read the history's watches are offered for
 * (data it saw no write of), then call sched_yield() many times from a loop
 * that touches no memory: nearly every call is a context switch, and a
 * thread with a user breakpoint armed pays at each one (docs/history.md,
 * "Watches of reads").  Nothing here races.  The positive control: a watch
 * was armed (hw_history_watches), its threads' switches were counted
 * (hw_history_switches) and, their cost over the history's share of the
 * budget, the watches were closed (hw_history_closed): the pacing that
 * lets them be on by default.  Unpaced, a watch stayed armed until it was
 * HB_WATCH_MS old.
 *
 * Expected: none
 */
#include <sched.h>

#include "suite.h"

#define THREADS	3
#define YIELDS	400000

static long table[64];

static SITE long read_table(long from)
{
	long sum = 0;

	for (long i = from; i < 64; i += THREADS)
		sum += table[i];
	return sum;
}

static void *storm(void *arg)
{
	long sum = read_table((long)arg);

	for (long i = 0; i < YIELDS; i++)
		sched_yield();
	return (void *)sum;
}

int main(void)
{
	pthread_t t[THREADS];
	long sum = 0;
	void *r;

	for (long i = 0; i < THREADS; i++)
		start_thread(&t[i], storm, (void *)i);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], &r);
		sum += (long)r;
	}
	return sum != 0;
}

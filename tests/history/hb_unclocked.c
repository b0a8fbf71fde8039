// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy, and, run with --param history_slots=2, a thread without a clock.
 *
 * The racer writes x and ends; main reads x once both threads have ended
 * (seen in /proc: no sync function), ordered after the write by nothing.
 * The third thread touches y only.  At the defaults every thread has a
 * clock and the pair is reported.  With two clock slots (main's and the
 * racer's), the third thread gets none: its sync, if it had any, would go
 * unseen and could order two others, so from its first probed hit on the
 * daemon drops what the history finds, counts it
 * (history_reports_dropped) and says so in a warning at the end
 * (tests/history-check.sh checks both runs).
 *
 * Expected: "data-race in put / take"
 */
#include "suite.h"

static long x, y;

static SITE void put(long v)
{
	x = v;
}

static SITE long take(void)
{
	return x;
}

static SITE void touch(long v)
{
	y = v;
}

static void *racer(void *arg)
{
	put(1);
	return NULL;
}

static void *unclocked(void *arg)
{
	touch(2);
	return NULL;
}

int main(void)
{
	pthread_t r, u;
	long v;

	start_thread(&r, racer, NULL);
	start_thread(&u, unclocked, NULL);
	wait_alone();
	v = take();
	pthread_join(r, NULL);
	pthread_join(u, NULL);
	return v == 1 ? 0 : 1;
}

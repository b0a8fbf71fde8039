// SPDX-License-Identifier: GPL-2.0-only
/*
 * The site sampler's per-site backoff: a long serial initialization, then
 * a short racy parallel phase, found at the defaults.
 *
 * main() first fills a table alone, in a loop hot enough to use up the
 * sampler's warm-up (every site armed) many times over.  Only then do two
 * threads start, running code that has never run before: a plain read
 * racing with a plain write, as in plain_write_vs_read, for a bounded
 * number of iterations.  Their sites are new to the sampler, so they start
 * at backoff level 0, armed in full for their first sampler_backoff_hits
 * hits; a warm-up alone would have been spent on the initialization.
 */
#include "scenario.h"

/* The initialization: about 0.2 s natively, millions of hits of init_step(). */
#define INIT_ITERS	60000000L
/* The racy phase: a few ms natively. */
#define ITERS		40000

#define TABLE		4096

static int table[TABLE];
int x;

RACY void init_step(long i)
{
	table[i % TABLE] += (int)i;
}

RACY int reader(void)
{
	return x;
}

RACY void writer(int v)
{
	x = v;
}

static void *reader_thread(void *arg)
{
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i++) {
		reader();
		barrier();
	}
	return NULL;
}

static void *writer_thread(void *arg)
{
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i++) {
		writer(i + 1);
		barrier();
	}
	return NULL;
}

int main(void)
{
	void *(*const fn[])(void *) = { reader_thread, writer_thread };
	long i, iters = scenario_iters(ITERS);

	for (i = 0; i < INIT_ITERS; i++)
		init_step(i);
	run_threads(2, fn, (void *)iters);
	return table[1] == 0x7fffffff;
}

/*
 * At the default budget (stated, so that the runner does not arm every site for
 * its 60,000,000 serial steps) the history finds it: the race needs no overlap of the
 * two threads, only both accesses sampled, and level 0 samples the new
 * sites in full (5 runs of 5, by the history, 0.9 to 1.05 s each).  With
 * KCSAN's watchpoints alone (--no-history) it was reported in 3 runs of
 * 10 (docs/PERFORMANCE.md, "Per-site backoff", has those runs).
 */
/* kcsand-test: name=serial_init_then_race args="--halt-on-error --overhead-budget 10" expect=report title="data-race in reader / writer" access="^(read|write) to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" */

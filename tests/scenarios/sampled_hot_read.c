// SPDX-License-Identifier: GPL-2.0-only
/*
 * The site sampler's case: a racy read on the hot path of both threads,
 * found at a 10% overhead budget with no warm-up, so only by a hot turn.
 *
 * Both threads take turns at bumping a counter under its lock and peeking
 * at it without the lock (as bench/hashtable's emptiness test).  For a
 * first phase each thread has counters of its own, so the
 * sampler has measured every site as hot, and stopped arming them all,
 * before there is a race to see.  Then the sampler arms them two at a
 * time, in one thread, by execute breakpoints, while the other thread runs
 * natively and changes the counter under the watcher's stall.  The race is found as a race of
 * unknown origin in peek(), whose escalation then reports bump() with
 * both stacks; the summary must show turns taken on one thread.
 */
#include "scenario.h"

/*
 * Racy: the turns find it within a second on an idle machine, and
 * --halt-on-error ends the run there.  Each thread's own-counter phase is
 * OWN_ITERS iterations (1.5 s natively on 2 vCPUs); the shared phase runs
 * until the report, at most SECONDS (under run-scenarios.sh's 120): on a
 * loaded machine the other thread seldom runs during a turn's stall, and a
 * fixed count ran out before a turn caught it (1 or 2 runs of 3 at load
 * 15-20; at load 15 a run took 44 s to its report).
 */
#define OWN_ITERS 62500000
#define SECONDS 100

#define NR_COUNTERS 4	/* shared; then one more of its own for each thread */

static struct counter {
	pthread_mutex_t lock;
	int n;
} __attribute__((aligned(64))) counters[NR_COUNTERS + 2] = {
	[0 ... NR_COUNTERS + 1] = { PTHREAD_MUTEX_INITIALIZER, 0 },
};
static int next_id;

RACY int peek(struct counter *c)
{
	return c->n;
}

RACY void bump(struct counter *c, int d)
{
	c->n += d;
}

static void *worker(void *arg)
{
	long i, n = (long)arg, seen = 0;
	unsigned int r = (unsigned int)(unsigned long)&i;
	struct counter *own = &counters[NR_COUNTERS + __atomic_fetch_add(&next_id, 1,
									 __ATOMIC_RELAXED) % 2];
	long end = scenario_now() + SECONDS;

	wait_for_start();
	/* The clock every 1024 iterations, and no flag: no site more to sample. */
	for (i = 0; i < n || (i & 1023) || scenario_now() < end; i++) {
		struct counter *c;

		r = r * 1103515245 + 12345;
		c = i < n ? own : &counters[(r >> 16) % NR_COUNTERS];
		if (r & 0x100) {
			pthread_mutex_lock(&c->lock);
			bump(c, (r & 0x200) ? 1 : -1);
			pthread_mutex_unlock(&c->lock);
		} else {
			seen += peek(c);
		}
	}
	return (void *)seen;
}

SCENARIO_MAIN(OWN_ITERS, worker, worker)

/* kcsand-test: name=sampled_hot_read needs=hwbp args="--no-history --halt-on-error --overhead-budget 10 --param sampler_warmup_cpu_ms=0" expect=report title_re="^data-race in (peek\+0x[0-9a-f]+/0x[0-9a-f]+|bump / peek)$" funcs="peek bump" value_changed=yes log_re="hot_turns_one_thread: [1-9]" */

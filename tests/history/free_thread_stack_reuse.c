// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: detached threads, one after another, each adding to a buffer
 * on its own stack (and a thread-local one).  glibc keeps the stack of a
 * thread that ended and gives it to the next thread it creates, so the
 * second thread writes the very addresses the first one wrote, with no
 * synchronization between the two: the stack changed owner when the first
 * thread ended and the second started.  A detector that does not reset a
 * new thread's stack and static TLS reports the two writes.
 *
 * Fewer threads than the history's 64 clock slots, each adding to its buffers
 * many times, so that the run leaves the sampler's cold start.
 *
 * Expected: race-free
 */
#include "suite.h"

#define THREADS	40
#define ROUNDS	1250	/* suite_rounds(): a tenth in the run with every site armed */

/* One mutex per thread: sync operations that order nothing between threads. */
static pthread_mutex_t own[THREADS];
static __thread long tls_buf[16];

static SITE void add(long *buf, long v)
{
	for (int i = 0; i < 16; i++)
		buf[i] += v;
}

static void *worker(void *arg)
{
	long buf[16] = { 0 };

	for (int r = 0, n = suite_rounds(ROUNDS); r < n; r++) {
		add(buf, (long)arg + r);
		add(tls_buf, r);
		/* Sync calls that order nothing between threads: the run leaves the cold start. */
		pthread_mutex_lock(&own[(long)arg]);
		pthread_mutex_unlock(&own[(long)arg]);
		/* Work of its own, which earns the sync probes their share of the budget. */
		spin_us(40);
	}
	return (void *)(buf[0] + tls_buf[0]);
}

int main(void)
{
	for (int t = 0; t < THREADS; t++)
		pthread_mutex_init(&own[t], NULL);
	return run_detached_in_turn(worker, THREADS);
}

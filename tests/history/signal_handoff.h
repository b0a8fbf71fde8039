/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the signal programs share: the main thread puts a value, and a
 * worker's SIGUSR1 handler takes it; the handler then acknowledges through
 * an eventfd, which the main thread reads before the next round.  Whether
 * the put comes before or after pthread_kill() is the program's choice
 * (SIGNAL_PUT_AFTER_KILL).  The worker waits in read() on a second eventfd
 * (restarted after each handler) until the main thread says stop.
 */
#ifndef KCSAND_HISTORY_SIGNAL_HANDOFF_H
#define KCSAND_HISTORY_SIGNAL_HANDOFF_H

#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "suite.h"

SUITE_SHARED(long, value, put, take)

static int acks, stop;
static long taken;

static void on_signal(int sig)
{
	taken += take();
	if (eventfd_write(acks, 1))
		_exit(2);
}

static void *waiter(void *arg)
{
	eventfd_t v;

	while (eventfd_read(stop, &v))
		;
	return NULL;
}

static int signal_handoff_run(long rounds, int put_after_kill)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	pthread_t worker;
	eventfd_t v;

	acks = eventfd(0, 0);
	stop = eventfd(0, 0);
	if (acks < 0 || stop < 0 || sigaction(SIGUSR1, &sa, NULL))
		return 2;
	start_thread(&worker, waiter, NULL);
	for (long r = 1; r <= rounds; r++) {
		if (!put_after_kill)
			put(r);
		if (pthread_kill(worker, SIGUSR1))
			return 2;
		if (put_after_kill)
			put(r);
		if (eventfd_read(acks, &v))
			return 2;
	}
	if (eventfd_write(stop, 1) || pthread_join(worker, NULL))
		return 2;
	return 0;
}

#endif

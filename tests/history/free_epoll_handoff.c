// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: an event loop.  A worker fills a plain buffer and writes to
 * an eventfd; the loop waits in epoll_wait() for the eventfd to be
 * readable, reads its count, then reads the buffer, and answers through a
 * pipe before the worker fills it again.  The kernel orders the write
 * before the read that returns its count.
 *
 * Expected: race-free
 */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "handoff.h"

#define ROUNDS	5000

static int ready, answer[2], loop_fd;

static void *worker(void *arg)
{
	uint64_t one = 1;
	long token;

	for (long r = 0; r < ROUNDS; r++) {
		fill(r);
		if (write(ready, &one, sizeof(one)) != sizeof(one) ||
		    read(answer[0], &token, sizeof(token)) != sizeof(token))
			exit(2);
	}
	return NULL;
}

static void *event_loop(void *arg)
{
	struct epoll_event ev;
	long sum = 0;
	uint64_t n;

	for (long r = 0; r < ROUNDS; r++) {
		if (epoll_wait(loop_fd, &ev, 1, -1) != 1 || ev.data.fd != ready ||
		    read(ready, &n, sizeof(n)) != sizeof(n))
			exit(2);
		sum += total();
		if (write(answer[1], &r, sizeof(r)) != sizeof(r))
			exit(2);
	}
	return (void *)sum;
}

int main(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	long sum;

	ready = eventfd(0, 0);
	loop_fd = epoll_create1(0);
	ev.data.fd = ready;
	if (ready < 0 || loop_fd < 0 || pipe(answer) ||
	    epoll_ctl(loop_fd, EPOLL_CTL_ADD, ready, &ev))
		return 2;
	sum = (long)run_pair(worker, NULL, event_loop, NULL);
	return sum != handoff_want(ROUNDS);
}

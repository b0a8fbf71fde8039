// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a producer fills a plain buffer and sends a token through
 * one end of a socket pair; the consumer receives it at the other end,
 * reads the buffer, and sends a token back before the producer fills it
 * again.  Then the same over a TCP connection on the loopback.  The two
 * ends are different sockets: what they share is the connection.
 *
 * Expected: race-free
 */
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "handoff.h"

/* [0]: the producer's end, [1]: the consumer's. */
static int ends[2];

static void pass(int fd, long v)
{
	if (send(fd, &v, sizeof(v), 0) != sizeof(v))
		exit(2);
}

static long wait_token(int fd)
{
	long v;

	if (recv(fd, &v, sizeof(v), MSG_WAITALL) != sizeof(v))
		exit(2);
	return v;
}

/* A producer and a consumer over the two ends[], each end both ways. */
static int run_over_ends(void)
{
	return handoff_run(&(struct handoff){
		.rounds = suite_rounds(10000),
		.producer_out = ends[0], .producer_in = ends[0],
		.consumer_in = ends[1], .consumer_out = ends[1],
		.pass = pass, .wait_token = wait_token,
	});
}

/* ends[]: the two ends of a TCP connection on the loopback. */
static int connect_loopback(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		return -1;
	ends[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (ends[0] < 0 || connect(ends[0], (struct sockaddr *)&a, sizeof(a)))
		return -1;
	ends[1] = accept(l, NULL, NULL);
	close(l);
	return ends[1] < 0 ? -1 : 0;
}

int main(void)
{
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, ends))
		return 2;
	if (run_over_ends())
		return 1;
	close(ends[0]);
	close(ends[1]);
	if (connect_loopback())
		return 2;
	return run_over_ends();
}

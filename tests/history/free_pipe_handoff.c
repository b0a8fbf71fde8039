// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a producer fills a plain buffer and writes a token into a
 * pipe; the consumer reads the token, then reads the buffer, and writes a
 * token back through a second pipe before the producer fills it again.
 * The kernel orders each write before the read that returns its bytes.
 * The two ends of a pipe are different descriptors and different files:
 * what they share is the pipe.
 *
 * Expected: race-free
 */
#include <unistd.h>
#include "handoff.h"

static void pass(int fd, long v)
{
	if (write(fd, &v, sizeof(v)) != sizeof(v))
		exit(2);
}

static long wait_token(int fd)
{
	long v;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		exit(2);
	return v;
}

int main(void)
{
	int to_consumer[2], to_producer[2];

	if (pipe(to_consumer) || pipe(to_producer))
		return 2;
	return handoff_run(&(struct handoff){
		.rounds = 20000,
		.producer_out = to_consumer[1], .producer_in = to_producer[0],
		.consumer_in = to_consumer[0], .consumer_out = to_producer[1],
		.pass = pass, .wait_token = wait_token,
	});
}

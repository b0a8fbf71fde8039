// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a producer fills a plain buffer and adds to an eventfd
 * counter; the consumer reads the counter (eventfd_read), then the buffer,
 * and adds to a second eventfd before the producer fills it again.  The
 * kernel orders each eventfd_write before the read that returns its count.
 *
 * Expected: race-free
 */
#include <sys/eventfd.h>
#include <unistd.h>
#include "handoff.h"

static void pass(int fd, long v)
{
	if (eventfd_write(fd, v + 1))
		exit(2);
}

static long wait_token(int fd)
{
	eventfd_t v;

	if (eventfd_read(fd, &v))
		exit(2);
	return (long)v - 1;
}

int main(void)
{
	int to_consumer = eventfd(0, 0), to_producer = eventfd(0, 0);

	if (to_consumer < 0 || to_producer < 0)
		return 2;
	return handoff_run(&(struct handoff){
		.rounds = suite_rounds(20000),
		.producer_out = to_consumer, .producer_in = to_producer,
		.consumer_in = to_consumer, .consumer_out = to_producer,
		.pass = pass, .wait_token = wait_token,
	});
}

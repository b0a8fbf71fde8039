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
#include "suite.h"

#define ROUNDS	20000

static long buffer[8];
static int to_consumer, to_producer;

static SITE void fill(long v)
{
	for (int i = 0; i < 8; i++)
		buffer[i] = v + i;
}

static SITE long total(void)
{
	long s = 0;

	for (int i = 0; i < 8; i++)
		s += buffer[i];
	return s;
}

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

static void *producer(void *arg)
{
	for (long r = 0; r < ROUNDS; r++) {
		fill(r);
		pass(to_consumer, r);
		wait_token(to_producer);
		spin_us(20);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long sum = 0;

	for (long r = 0; r < ROUNDS; r++) {
		wait_token(to_consumer);
		sum += total();
		pass(to_producer, r);
	}
	return (void *)sum;
}

int main(void)
{
	long sum;

	to_consumer = eventfd(0, 0);
	to_producer = eventfd(0, 0);
	if (to_consumer < 0 || to_producer < 0)
		return 2;
	sum = (long)run_pair(producer, NULL, consumer, NULL);
	return sum != 8L * ROUNDS * (ROUNDS - 1) / 2 + 28L * ROUNDS;
}

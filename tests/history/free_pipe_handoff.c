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
#include "suite.h"

#define ROUNDS	20000

static long buffer[8];
static int to_consumer[2], to_producer[2];

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

static void *producer(void *arg)
{
	for (long r = 0; r < ROUNDS; r++) {
		fill(r);
		pass(to_consumer[1], r);
		wait_token(to_producer[0]);
		spin_us(20);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long sum = 0;

	for (long r = 0; r < ROUNDS; r++) {
		wait_token(to_consumer[0]);
		sum += total();
		pass(to_producer[1], r);
	}
	return (void *)sum;
}

int main(void)
{
	long sum;

	if (pipe(to_consumer) || pipe(to_producer))
		return 2;
	sum = (long)run_pair(producer, NULL, consumer, NULL);
	return sum != 8L * ROUNDS * (ROUNDS - 1) / 2 + 28L * ROUNDS;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a program that forks a worker process, as servers and build
 * tools do.  The child is a process of its own with two threads: one
 * fills a plain buffer and writes a token into a pipe, the other reads
 * the token and then the buffer, and answers through a second pipe before
 * the buffer is filled again.  The parent meanwhile does the same in its
 * own threads over two pipes of its own, then waits for the child.  The
 * child's history starts at the fork, with the one thread the fork copied.
 *
 * Expected: race-free
 */
#include <sys/wait.h>
#include <unistd.h>
#include "suite.h"

#define ROUNDS	5000

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

static void wait_token(int fd)
{
	long v;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		exit(2);
}

static void *producer(void *arg)
{
	for (long r = 0; r < ROUNDS; r++) {
		fill(r);
		pass(to_consumer[1], r);
		wait_token(to_producer[0]);
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

/* One process's handoffs over pipes of its own: 0 when every round was seen whole. */
static int handoffs(void)
{
	long sum;

	if (pipe(to_consumer) || pipe(to_producer))
		return 2;
	sum = (long)run_pair(producer, NULL, consumer, NULL);
	return sum != 8L * ROUNDS * (ROUNDS - 1) / 2 + 28L * ROUNDS;
}

int main(void)
{
	int status, rc;
	pid_t child;

	fill(-1);
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0)
		_exit(handoffs());
	rc = handoffs();
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return 2;
	return rc || WEXITSTATUS(status);
}

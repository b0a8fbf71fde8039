/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the handoff programs share: a producer fills a plain buffer and
 * passes a token through a kernel object (a pipe, a socket, an eventfd);
 * the consumer waits for the token, sums the buffer, and passes a token
 * back, which the producer waits for before it fills the buffer again.
 * Only the kernel object orders fill() before total() and total() before
 * the next fill(), so a detector that does not see the token's way as
 * synchronization reports the two.  Each program says how a token goes:
 * through which descriptors, by which calls (struct handoff).
 */
#ifndef KCSAND_HISTORY_HANDOFF_H
#define KCSAND_HISTORY_HANDOFF_H

#include <unistd.h>
#include "suite.h"

struct handoff {
	long rounds;
	/* The producer passes through producer_out and waits on producer_in; the consumer alike. */
	int producer_out, producer_in;
	int consumer_in, consumer_out;
	void (*pass)(int fd, long v);
	long (*wait_token)(int fd);
};

static long buffer[8];

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

/* What the consumer's sums add up to over ROUNDS fills. */
static inline long handoff_want(long rounds)
{
	return 8L * rounds * (rounds - 1) / 2 + 28L * rounds;
}

/* Inline: a program with a way of its own (free_epoll_handoff.c) shares only the buffer. */
static inline void *producer(void *arg)
{
	const struct handoff *h = arg;

	for (long r = 0; r < h->rounds; r++) {
		fill(r);
		h->pass(h->producer_out, r);
		h->wait_token(h->producer_in);
		spin_us(20);
	}
	return NULL;
}

static inline void *consumer(void *arg)
{
	const struct handoff *h = arg;
	long sum = 0;

	for (long r = 0; r < h->rounds; r++) {
		h->wait_token(h->consumer_in);
		sum += total();
		h->pass(h->consumer_out, r);
	}
	return (void *)sum;
}

/* The producer and the consumer over H's way, in two threads: 0 when the sum is what was filled. */
static inline int handoff_run(struct handoff *h)
{
	long want = handoff_want(h->rounds);

	return (long)run_pair(producer, h, consumer, h) != want;
}

/* A token through a pipe: a long written into its write end, read from its read end. */
static inline void pipe_pass(int fd, long v)
{
	if (write(fd, &v, sizeof(v)) != sizeof(v))
		exit(2);
}

static inline long pipe_wait_token(int fd)
{
	long v;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		exit(2);
	return v;
}

/* handoff_run() over two new pipes, one each way: 2 when they cannot be made. */
static inline int handoff_run_pipes(long rounds)
{
	int to_consumer[2], to_producer[2];

	if (pipe(to_consumer) || pipe(to_producer))
		return 2;
	return handoff_run(&(struct handoff){
		.rounds = rounds,
		.producer_out = to_consumer[1], .producer_in = to_producer[0],
		.consumer_in = to_consumer[0], .consumer_out = to_producer[1],
		.pass = pipe_pass, .wait_token = pipe_wait_token,
	});
}

#endif /* KCSAND_HISTORY_HANDOFF_H */

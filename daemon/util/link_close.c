// SPDX-License-Identifier: GPL-2.0-only
/* Closing link fds in parallel: see link_close.h. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "link_close.h"

/*
 * Threads for link_close__destroy().  The kernel serializes each link's
 * wait inside event_mutex, so a few threads take all there is to take:
 * one waits inside while the others wait outside.
 */
#define LINK_DESTROY_THREADS	8
/* Below this many links per thread, a thread costs more than it saves. */
#define LINK_DESTROY_PER_THREAD	4

void link_close__add(struct link_close *b, int *fd)
{
	if (*fd < 0)
		return;
	/* A full batch is closed first: one at a time, each would wait for its grace period. */
	if (b->n == LINK_CLOSE_MAX)
		link_close__all(b);
	b->fd[b->n++] = *fd;
	*fd = -1;
}

static void *close_one(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

void link_close__all(struct link_close *b)
{
	pthread_t t[LINK_CLOSE_MAX];
	bool started[LINK_CLOSE_MAX] = { false };

	/* The last one on this thread; one whose thread cannot start, too. */
	for (size_t i = 0; i + 1 < b->n; i++) {
		started[i] = !pthread_create(&t[i], NULL, close_one, (void *)(intptr_t)b->fd[i]);
		if (!started[i])
			close(b->fd[i]);
	}
	if (b->n)
		close(b->fd[b->n - 1]);
	for (size_t i = 0; i + 1 < b->n; i++)
		if (started[i])
			pthread_join(t[i], NULL);
	b->n = 0;
}

/* Links first, first + step, ... below n: one thread's share. */
struct destroy_share {
	struct bpf_link **links;
	size_t n, first, step;
};

static void *destroy_share(void *arg)
{
	const struct destroy_share *d = arg;

	for (size_t i = d->first; i < d->n; i += d->step) {
		bpf_link__destroy(d->links[i]);
		d->links[i] = NULL;
	}
	return NULL;
}

void link_close__destroy(struct bpf_link **links, size_t n)
{
	struct destroy_share d[LINK_DESTROY_THREADS];
	pthread_t t[LINK_DESTROY_THREADS];
	bool started[LINK_DESTROY_THREADS] = { false };
	size_t nt = n / LINK_DESTROY_PER_THREAD;

	if (nt > LINK_DESTROY_THREADS)
		nt = LINK_DESTROY_THREADS;
	if (nt < 1)
		nt = 1;
	for (size_t k = 0; k < nt; k++)
		d[k] = (struct destroy_share){ .links = links, .n = n, .first = k, .step = nt };
	/* Share 0 on this thread, and any whose thread cannot start, after the others start. */
	for (size_t k = 1; k < nt; k++)
		started[k] = !pthread_create(&t[k], NULL, destroy_share, &d[k]);
	for (size_t k = 0; k < nt; k++)
		if (!started[k])
			destroy_share(&d[k]);
	for (size_t k = 1; k < nt; k++)
		if (started[k])
			pthread_join(t[k], NULL);
}

void link_close__start(struct link_close_bg *bg, int fd)
{
	link_close__join(bg);
	if (fd < 0)
		return;
	bg->running = !pthread_create(&bg->thread, NULL, close_one, (void *)(intptr_t)fd);
	if (!bg->running)
		close(fd);
}

void link_close__join(struct link_close_bg *bg)
{
	if (bg->running)
		pthread_join(bg->thread, NULL);
	bg->running = false;
}

// SPDX-License-Identifier: GPL-2.0-only
/* Closing link fds in parallel: see link_close.h. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include "link_close.h"

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

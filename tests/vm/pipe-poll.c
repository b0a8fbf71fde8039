// SPDX-License-Identifier: GPL-2.0-only
/*
 * A stock-kernel workload for tests/vm/marking-noise.sh: one thread writes
 * into a pipe, one reads from it and one poll()s both ends, for S seconds.
 * pipe_poll() reads the pipe's head and tail without the pipe's mutex, with
 * READ_ONCE(), while pipe_write() and pipe_read() store them under it: the
 * kernel's own example of a marked read against a plain write.
 *   pipe-poll [S]
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static time_t end;

static void *writer(void *arg)
{
	char c = 'x';

	while (time(NULL) < end)
		if (write(fds[1], &c, 1) < 0)
			break;
	close(fds[1]);
	return NULL;
}

static void *reader(void *arg)
{
	char buf[64];

	while (read(fds[0], buf, sizeof(buf)) > 0)
		;
	return NULL;
}

static void *poller(void *arg)
{
	struct pollfd p[2] = { { .fd = fds[0], .events = POLLIN },
			       { .fd = fds[1], .events = POLLOUT } };

	while (time(NULL) < end)
		poll(p, 2, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[3];

	end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 20);
	if (pipe(fds)) {
		perror("pipe-poll: pipe");
		return 1;
	}
	pthread_create(&t[0], NULL, writer, NULL);
	pthread_create(&t[1], NULL, reader, NULL);
	pthread_create(&t[2], NULL, poller, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}

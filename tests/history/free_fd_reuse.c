// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a table indexed by descriptor number, as a server keeps its
 * connections.  Two threads each open a descriptor, write its slot, read
 * it back and close it, over and over, and nothing else orders them.  The
 * kernel hands a number out again only after close() took it back, so the
 * next thread to get that number, and write its slot, comes after all that
 * the closing thread did.  memcached's connection objects were reported
 * this way (docs/real-programs.md: descriptor reuse).
 *
 * Expected: race-free
 */
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#define SITE __attribute__((noinline, noipa))
#define ROUNDS 5000
#define SLOTS 1024

static long owner[SLOTS];
static pthread_barrier_t both;

static SITE void claim(int fd, long who)
{
	owner[fd % SLOTS] = who;
}

static SITE long owner_of(int fd)
{
	return owner[fd % SLOTS];
}

static void *worker(void *arg)
{
	long who = (long)arg, bad = 0;

	pthread_barrier_wait(&both);	/* the two loops run at once */
	for (int i = 0; i < ROUNDS; i++) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd < 0)
			return (void *)1;
		claim(fd, who);
		bad += owner_of(fd) != who;
		close(fd);
	}
	return (void *)bad;
}

int main(void)
{
	pthread_t t[2];
	void *bad[2];

	pthread_barrier_init(&both, NULL, 2);
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)))
			return 2;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], &bad[i]);
	return bad[0] || bad[1];
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * kworkload KIND SECONDS [DIR]: a ready kernel workload for the test guest
 * (tests/vm/kcsan-vm --workload), so that a first kernel-mode run needs no
 * workload of the user's.  KIND:
 *   fs     two threads create, write, read, stat, rename and unlink small
 *          files in DIR (default /tmp), one directory shared;
 *   pipe   two pairs of threads pass a byte back and forth through pipes,
 *          one reader with poll(2), and one pipe closed and reopened;
 *   net    a TCP client and server over loopback, ping-pong of 64 bytes,
 *          and a UDP socket pair;
 *   fork   fork, exit and wait, two forkers;
 *   mixed  all of the above at once.
 * Each thread counts its operations; at the end one line per kind,
 * "kworkload: KIND OPS ops in S s (R ops/s)": the throughput that the
 * overhead figures in docs/kernel-mode.md compare.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static const char *dir = "/tmp";
static atomic_ulong ops[4];	/* fs, pipe, net, fork */
static const char *const names[4] = { "fs", "pipe", "net", "fork" };

static void *fs_thread(void *arg)
{
	long id = (long)arg;
	char a[240], b[256], buf[512];
	struct stat st;

	memset(buf, 'k', sizeof(buf));
	snprintf(a, sizeof(a), "%s/kworkload.%d.%ld", dir, getpid(), id);
	snprintf(b, sizeof(b), "%s.renamed", a);
	while (!stop) {
		int fd = open(a, O_CREAT | O_RDWR | O_TRUNC, 0600);

		if (fd < 0)
			break;
		if (write(fd, buf, sizeof(buf)) < 0 || pread(fd, buf, sizeof(buf), 0) < 0)
			break;
		fstat(fd, &st);
		close(fd);
		stat(dir, &st);
		rename(a, b);
		unlink(b);
		ops[0]++;
	}
	return NULL;
}

struct pipe_pair {
	int ab[2], ba[2];
	int use_poll;
};

static void *pipe_echo(void *arg)
{
	struct pipe_pair *p = arg;
	char c;

	while (read(p->ab[0], &c, 1) == 1 && write(p->ba[1], &c, 1) == 1)
		;
	return NULL;
}

static void *pipe_thread(void *arg)
{
	struct pipe_pair p = { .use_poll = (long)arg };
	pthread_t t;
	char c = 'p';

	while (!stop) {
		if (pipe(p.ab) || pipe(p.ba))
			break;
		pthread_create(&t, NULL, pipe_echo, &p);
		for (int i = 0; i < 1000 && !stop; i++) {
			struct pollfd pf = { .fd = p.ba[0], .events = POLLIN };

			if (write(p.ab[1], &c, 1) != 1)
				break;
			if (p.use_poll)
				poll(&pf, 1, 1000);
			if (read(p.ba[0], &c, 1) != 1)
				break;
			ops[1]++;
		}
		/* Closing while the echo thread polls its end: pipe_release vs pipe_poll. */
		close(p.ab[1]);
		pthread_join(t, NULL);
		close(p.ab[0]);
		close(p.ba[0]);
		close(p.ba[1]);
	}
	return NULL;
}

/* Blocking calls give up after 200 ms, so that every thread sees stop. */
static void timeout(int s)
{
	struct timeval tv = { .tv_usec = 200000 };

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void *net_server(void *arg)
{
	int ls = (long)arg, s;
	char buf[64];

	while (!stop) {
		ssize_t n;

		s = accept(ls, NULL, NULL);
		if (s < 0)
			continue;
		timeout(s);
		while (!stop && (n = read(s, buf, sizeof(buf))) > 0 && write(s, buf, n) == n)
			;
		close(s);
	}
	return NULL;
}

static void *net_thread(void *arg)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	char buf[64] = "kworkload";
	pthread_t t;

	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 4) ||
	    getsockname(ls, (struct sockaddr *)&sa, &len)) {
		perror("kworkload: net: loopback (is lo up?)");
		return NULL;
	}
	timeout(ls);
	pthread_create(&t, NULL, net_server, (void *)(long)ls);
	while (!stop) {
		int s = socket(AF_INET, SOCK_STREAM, 0);

		if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
			perror("kworkload: net: connect");
			break;
		}
		timeout(s);
		for (int i = 0; i < 200 && !stop; i++) {
			if (write(s, buf, sizeof(buf)) != sizeof(buf) ||
			    read(s, buf, sizeof(buf)) <= 0)
				break;
			ops[2]++;
		}
		close(s);
	}
	pthread_join(t, NULL);
	close(ls);
	return NULL;
}

static void *fork_thread(void *arg)
{
	while (!stop) {
		pid_t p = fork();

		if (p == 0)
			_exit(0);
		if (p < 0 || waitpid(p, NULL, 0) < 0)
			break;
		ops[3]++;
	}
	return NULL;
}

/* SIGTERM (kcsanctl run --duration) ends the run early, with the counts printed. */
static void on_term(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	void *(*fn[4])(void *) = { fs_thread, pipe_thread, net_thread, fork_thread };
	pthread_t t[16];
	int nt = 0, kind = -1;
	double secs;
	struct timespec t0, t1;

	if (argc < 3 || (secs = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: kworkload fs|pipe|net|fork|mixed SECONDS [DIR]\n");
		return 2;
	}
	if (argc > 3)
		dir = argv[3];
	for (int k = 0; k < 4; k++)
		if (!strcmp(argv[1], names[k]))
			kind = k;
	if (kind < 0 && strcmp(argv[1], "mixed")) {
		fprintf(stderr, "kworkload: unknown kind '%s' (fs, pipe, net, fork or mixed)\n",
			argv[1]);
		return 2;
	}
	signal(SIGTERM, on_term);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int k = 0; k < 4; k++) {
		if (kind >= 0 && k != kind)
			continue;
		/* Two threads of each kind, so that they can race with each other. */
		for (long i = 0; i < 2; i++)
			pthread_create(&t[nt++], NULL, fn[k], (void *)i);
	}
	/* usleep() returns early on SIGTERM: stop is set then. */
	usleep(secs * 1e6);
	stop = 1;
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	for (int k = 0; k < 4; k++)
		if (kind < 0 || k == kind)
			printf("kworkload: %s %lu ops in %.1f s (%.0f ops/s)\n", names[k], ops[k], secs,
			       ops[k] / secs);
	return 0;
}

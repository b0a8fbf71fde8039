// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench/kloop: a system-call loop for kernel mode (bench/kernel/p8-kernel-budget.sh
 * runs it in the test guest under kcsanctl run --kernel with kprobes on the
 * read(2) path).  Reads one byte from /dev/zero in a loop for SECONDS and
 * prints, once a second, the ns per read(2) of that second, so that the
 * sampler's warm-up and readjustments show as they happen.
 *   kloop [SECONDS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 10, fd = open("/dev/zero", O_RDONLY);
	double start = now_ns(), t0 = start, t;
	long ops = 0;
	char c;

	if (fd < 0 || secs <= 0) {
		fprintf(stderr, "kloop: %s\n", fd < 0 ? "cannot open /dev/zero" : "bad SECONDS");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		if (read(fd, &c, 1) != 1) {
			perror("kloop: read");
			return 1;
		}
		ops++;
		if ((ops & 63) || (t = now_ns()) - t0 < 1e9)
			continue;
		printf("kloop: second %.0f: %.0f ns per read(2)\n", (t - start) / 1e9, (t - t0) / ops);
		if (t - start >= secs * 1e9)
			break;
		t0 = t;
		ops = 0;
	}
	close(fd);
	return 0;
}

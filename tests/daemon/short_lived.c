// SPDX-License-Identifier: GPL-2.0-only
/*
 * Short-lived processes for tests/daemon-procs.sh: without an argument, a
 * process that makes a few plain accesses to a global and exits at once;
 * with N, a launcher that runs N of them, up to P at a time, and exits 1
 * if one failed.  Every E-th is a new exec of this same file, the others
 * are forked (a fork costs a tenth of an exec): either way a process of
 * the probed binary that runs its probed code, traced under trace_all.
 * Built static: no dynamic loader, so an exec costs little more than itself.
 *
 *   short_lived [N [P [E]]]     (P: 8, E: 10)
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

extern char **environ;

int counter;

__attribute__((noinline, noipa)) void touch(int v)
{
	counter += v;
}

/* Reap one child: 1 when it did not exit 0. */
static int reap(void)
{
	int st;

	return wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	char *child_argv[] = { argv[0], NULL };
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 0;
	long par = argc > 2 ? strtol(argv[2], NULL, 0) : 8;
	long every_exec = argc > 3 ? strtol(argv[3], NULL, 0) : 10;
	long failed = 0, running = 0;

	touch(1);
	/* Several at a time: on a loaded machine one at a time waits mostly for the scheduler. */
	for (long i = 0; i < n; i++) {
		pid_t pid;

		if (running == par) {
			failed += reap();
			running--;
		}
		if (every_exec && i % every_exec == 0) {
			if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, child_argv, environ))
				pid = -1;
		} else {
			pid = fork();
			if (!pid) {
				touch(1);
				_exit(0);
			}
		}
		if (pid < 0)
			failed++;
		else
			running++;
	}
	while (running--)
		failed += reap();
	if (failed)
		fprintf(stderr, "short_lived: %ld of %ld runs failed\n", failed, n);
	return failed ? 1 : 0;
}

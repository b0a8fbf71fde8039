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
#include "handoff.h"

#define ROUNDS	5000

int main(void)
{
	int status, rc;
	pid_t child;

	fill(-1);
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0)
		_exit(handoff_run_pipes(ROUNDS));	/* pipes of its own */
	rc = handoff_run_pipes(ROUNDS);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return 2;
	return rc || WEXITSTATUS(status);
}

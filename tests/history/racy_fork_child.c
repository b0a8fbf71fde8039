// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: the race is in a forked child, a process of its own.  The parent
 * forks and waits; in each round, the child's two threads each store to
 * one word once, a millisecond apart, with nothing between them.  A
 * detector that follows only the process it started never looks at the
 * child.  The rounds repeat the race while the child's probes are being
 * put in place (a detector may need a moment after the fork): any one of
 * them is the race.
 *
 * Expected: "data-race in store_left / store_right"
 */
#include <sys/wait.h>
#include <unistd.h>
#include "suite.h"

/*
 * tests/daemon-history.sh builds it with more, and names a file whose creation ends the
 * rounds (argv[1]): a process found later is held longer, by how much the machine's load
 * decides, so that test stops the rounds at its report rather than guessing a number.
 */
#ifndef ROUNDS
#define ROUNDS	2000	/* 200 (0.2 s) ran out before the hold ended in 3 runs of 3 at load 45 */
#endif

SUITE_WRITE_WRITE_PAIR()

int main(int argc, char **argv)
{
	const char *stop = argc > 1 ? argv[1] : NULL;
	int status;
	pid_t child;

	child = fork();
	if (child < 0)
		return 2;
	if (child == 0) {
		for (int r = 0; r < ROUNDS && !(stop && access(stop, F_OK) == 0); r++)
			run_pair(left, NULL, right, NULL);
		_exit(mode == 0);
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return 2;
	return WEXITSTATUS(status);
}

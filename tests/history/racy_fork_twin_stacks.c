// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy, in the second of two children forked alike: both stacks of its
 * report must reach where the thread began.
 *
 * A forked child has its parent's layout, so two children forked from
 * the same state create their threads at the same addresses and reach
 * the same code at the same sp: the history's remembered stacks, keyed
 * by their frames and sp, are the same in both.  The first child runs the
 * pair ordered (the left thread joined before the right one starts), so
 * its left store is remembered, its stack copied, and nothing reported;
 * the second runs the pair unordered, and its report's earlier side is a
 * left store at the same stack.  stress-ng's stressors are such children
 * (real-programs.md: worker_stacks_reach_clone3).  Built without frame
 * pointers: only the copy's CFI unwind gets to start_thread, __clone3.
 *
 * Expected: "data-race in store_left / store_right"
 */
#include <sys/wait.h>
#include "suite.h"

/*
 * A forked child runs unwatched until the daemon has probed it (30 ms to
 * 660 ms here, by the load), and a round's thread creations and joins
 * spend the sync probes' share of the budget, which closes their window
 * (nothing is remembered then) until the child's own CPU time earns it
 * back: each child runs rounds for about a second, GAP_US of spinning
 * before each, so that some rounds of each fall in a window.
 */
#define GAP_US	20000
#define ROUNDS	50

SUITE_WRITE_WRITE_PAIR()

/* The first child's pair, ordered by the join between them. */
static void run_ordered(void)
{
	pthread_t t;

	start_thread(&t, left, NULL);
	pthread_join(t, NULL);
	start_thread(&t, right, NULL);
	pthread_join(t, NULL);
}

/* Forks a child that runs ROUNDS rounds of the pair, ordered or not; its exit status. */
static int child(int racy)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return 2;
	if (pid == 0) {
		for (int r = 0; r < ROUNDS; r++) {
			spin_us(GAP_US);
			if (racy)
				run_pair(left, NULL, right, NULL);
			else
				run_ordered();
		}
		_exit(mode == 0);	/* read, so that the stores stay */
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 2;
	return WEXITSTATUS(status);
}

int main(void)
{
	int rc = child(0);

	return rc ? rc : child(1);
}

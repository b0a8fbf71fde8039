// SPDX-License-Identifier: GPL-2.0-only
/*
 * The race happens in a child process: the program forks, and the child's
 * two threads race on a global.  kcsand traces the target's process tree:
 * the sched_process_fork tracepoint adds the child to the traced set.
 *
 * gcc 12 -O1:  reader: mov x(%rip),%eax   writer: mov %edi,x(%rip)
 */
#include <sys/wait.h>
#include <unistd.h>
#include "scenario.h"

/*
 * The history finds this pair too, and first (tests/history: racy_plain_vs_atomic,
 * racy_fork_child); this case checks the watchpoint protocol's report, its
 * value change included, so it runs without the history.
 */
/* kcsand-test: name=race_in_forked_child args="--no-history --halt-on-error" iters=2000000 expect=report title="data-race in child_reader / child_writer" access="^read to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" access="^write to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" value_changed=yes */

#define ITERS 60000

int x;

RACY int child_reader(void)
{
	return x;
}

RACY void child_writer(int v)
{
	x = v;
}

SCENARIO_LOOP(reader_thread, child_reader())

SCENARIO_LOOP(writer_thread, child_writer(i + 1))

int main(void)
{
	void *(*const fn[])(void *) = { reader_thread, writer_thread };
	long n = scenario_iters(ITERS);
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (pid == 0) {
		run_threads(2, fn, (void *)n);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

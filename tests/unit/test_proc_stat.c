// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/PID/stat as util/proc_stat.h reads it: this process running, under
 * a command name with spaces and parentheses (the line is cut at the last
 * ')'), its CPU time after a busy loop, one of its threads by tid, a zombie
 * child, and a pid that is gone.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "test.h"
#include "util/proc_stat.h"

int main(void)
{
	struct proc_stat st = {};

	TEST(self_running_odd_name) {
		volatile unsigned long spin = 0;

		ASSERT_EQ(prctl(PR_SET_NAME, "a) S 1 (b", 0, 0, 0), 0, "a command name with ') S '");
		/* A tick or more of CPU time, so that utime + stime shows it. */
		for (unsigned long i = 0; i < 100000000UL; i++)
			spin += i;
		ASSERT_OK(proc_stat__read(0, 0, &st), "this process");
		ASSERT_EQ(st.state, 'R', "running (it reads its own stat)");
		ASSERT_TRUE(st.utime + st.stime > 0, "the busy loop's CPU time");
		ASSERT_TRUE(st.starttime > 0, "a start time");
	}
	TEST(thread_by_tid) {
		struct proc_stat t = {};

		ASSERT_OK(proc_stat__read(getpid(), gettid(), &t), "this thread");
		ASSERT_EQ(t.state, 'R', "running");
		ASSERT_EQ(t.starttime, st.starttime, "the main thread started with the process");
	}
	TEST(zombie_child) {
		struct proc_stat z = {};
		pid_t child = fork();

		if (child == 0)
			_exit(0);
		ASSERT_TRUE(child > 0, "fork");
		/* Not reaped: a zombie until waitpid(), polled for its exit. */
		for (int i = 0; i < 1000 && !proc_stat__read(child, 0, &z) && z.state != 'Z'; i++)
			usleep(10000);
		ASSERT_EQ(z.state, 'Z', "a zombie");
		waitpid(child, NULL, 0);
		ASSERT_EQ(proc_stat__read(child, 0, &z), -ENOENT, "reaped: gone");
	}
	return test_summary();
}

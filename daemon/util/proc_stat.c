// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/PID/stat: "pid (comm) state ppid ... utime stime ... starttime ...",
 * fields 3, 14, 15 and 22 of proc(5).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "proc_stat.h"

int proc_stat__read(pid_t pid, pid_t tid, struct proc_stat *out)
{
	char path[64], buf[1024], *p;
	FILE *f;

	if (!pid)
		snprintf(path, sizeof(path), "/proc/self/stat");
	else if (tid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/*
	 * After "comm)": state, then ppid pgrp session tty_nr tpgid flags
	 * minflt cminflt majflt cmajflt, utime stime, then cutime cstime
	 * priority nice num_threads itrealvalue, then starttime.
	 */
	if (!p || sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %lu %lu %*s %*s %*s "
			 "%*s %*s %*s %llu", &out->state, &out->utime, &out->stime,
			 &out->starttime) != 4)
		return -EINVAL;
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * /proc/PID/stat, and a thread's /proc/PID/task/TID/stat, read one way
 * (proc(5)): the fields after the command name, which may hold spaces and
 * parentheses itself, so the line is cut at its last ')'.  The samplers'
 * CPU times, the hot turns' running thread and the watches' process start
 * time all read it; each used to parse it its own way.
 */
#ifndef KCSAND_PROC_STAT_H
#define KCSAND_PROC_STAT_H

#include <sys/types.h>

struct proc_stat {
	char state;			/* R running, S, D, Z zombie, X dead, ... */
	unsigned long utime, stime;	/* clock ticks in user and system mode (a process: all threads) */
	unsigned long long starttime;	/* clock ticks after boot when it started */
};

/*
 * Process pid's (0: this process's) figures, or with tid > 0 its thread
 * tid's: 0; -errno when the file cannot be read (the process is gone),
 * -EINVAL when its line cannot be parsed.
 */
int proc_stat__read(pid_t pid, pid_t tid, struct proc_stat *out);

#endif

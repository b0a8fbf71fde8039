/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * /proc/PID/maps, read one way: each line as a struct proc_map, handed to a
 * callback.  The symbolizer, the hot turns, the watches, the trap-cost
 * calibration and the watch's load bias all read it; each used to parse it
 * its own way, and they disagreed on paths with spaces.
 */
#ifndef KCSAND_PROC_MAPS_H
#define KCSAND_PROC_MAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One mapping, as a line of /proc/PID/maps gives it. */
struct proc_map {
	uint64_t start, end;	/* [start, end) in the process */
	uint64_t pgoff;		/* the file offset that start maps */
	dev_t dev;
	uint64_t inode;		/* 0 for anonymous memory */
	char perms[5];		/* "r-xp" */
	/*
	 * The rest of the line, trailing newline cut: a path (spaces kept, a
	 * " (deleted)" suffix too), "[heap]", "[vdso]" and the like, or "" for
	 * anonymous memory.  Valid during the callback only.
	 */
	const char *path;
};

static inline bool proc_map__exec(const struct proc_map *m)
{
	return m->perms[2] == 'x';
}

/* A file's mapping, not anonymous memory, [heap] or [vdso]. */
static inline bool proc_map__file(const struct proc_map *m)
{
	return m->path[0] == '/';
}

/* Parses one line (modified: its newline cut); 0, or -EINVAL when it is no mapping. */
int proc_map__parse(char *line, struct proc_map *m);

/*
 * Calls fn(m, arg) on each mapping of process pid (0: this process) in the
 * file's order until fn returns non-zero, and returns that; 0 once every
 * line was given; -errno when the file cannot be read (the process is gone).
 */
int proc_maps__for_each(pid_t pid, int (*fn)(const struct proc_map *m, void *arg), void *arg);

#endif

// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/PID/maps: "start-end perms pgoff major:minor inode   path", the path
 * padded to a column and running to the end of the line (proc(5)).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include "proc_maps.h"

int proc_map__parse(char *line, struct proc_map *m)
{
	unsigned int major, minor;
	int pos = 0;

	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 "%n", &m->start,
		   &m->end, m->perms, &m->pgoff, &major, &minor, &m->inode, &pos) != 7 || !pos)
		return -EINVAL;
	m->dev = makedev(major, minor);
	m->path = line + pos + strspn(line + pos, " \t");
	return 0;
}

int proc_maps__for_each(pid_t pid, int (*fn)(const struct proc_map *m, void *arg), void *arg)
{
	size_t cap = 0;
	char name[64], *line = NULL;
	struct proc_map m;
	int ret = 0;
	FILE *f;

	if (pid)
		snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	else
		snprintf(name, sizeof(name), "/proc/self/maps");
	f = fopen(name, "re");
	if (!f)
		return -errno;
	while (!ret && getline(&line, &cap, f) > 0)
		if (!proc_map__parse(line, &m))
			ret = fn(&m, arg);
	free(line);
	fclose(f);
	return ret;
}

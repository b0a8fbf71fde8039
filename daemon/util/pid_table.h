/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a subsystem keeps per process, found by pid: a hash table of entries
 * that each user embeds, first, in its own struct (the symbolizer's maps
 * and biases, the unwinder's libdwfl handle, the mmap log's mappings).
 * Not thread-safe: each table has one owner, the report pipeline.
 */
#ifndef KCSAND_PID_TABLE_H
#define KCSAND_PID_TABLE_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PID_TABLE_BUCKETS	256

struct pid_entry {
	struct pid_entry *next;
	pid_t pid;
};

struct pid_table {
	struct pid_entry *bucket[PID_TABLE_BUCKETS];
};

/* pid's entry, or NULL. */
struct pid_entry *pid_table__find(const struct pid_table *t, pid_t pid);

/*
 * pid's entry; if there is none, a new one of size bytes, zeroed but for
 * the entry it starts with, added to the table.  NULL when out of memory.
 */
struct pid_entry *pid_table__get(struct pid_table *t, pid_t pid, size_t size);

/* pid's entry taken out of the table (the caller frees it), or NULL. */
struct pid_entry *pid_table__take(struct pid_table *t, pid_t pid);

/*
 * Calls fn(e, arg) on every entry; one for which fn returns true is taken
 * out of the table, and fn may free it (the walk no longer reads it).
 * Returns how many were taken out.
 */
size_t pid_table__each(struct pid_table *t, bool (*fn)(struct pid_entry *e, void *arg),
		       void *arg);

/* The process has exited and been reaped: its pid names nothing now. */
static inline bool pid__gone(pid_t pid)
{
	return kill(pid, 0) && errno == ESRCH;
}

#endif

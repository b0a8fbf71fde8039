/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where processes have their code mapped, as perf record learns it: from
 * the kernel's mmap, fork and exec records (a dummy perf event on every
 * CPU), not from /proc/PID/maps, which is empty once the process exited.
 * A report of a short program is often read after its exit (the daemon
 * shares the machine with it); the CFI unwind of its stacks still needs
 * to know which file each address is in (unwind.c).
 *
 * Only executable file mappings are kept, per process, until the reports
 * it sent before it exited were read (mmap_log__prune).  A process that started before the log did
 * has no full list here: its mappings are read from /proc/PID/maps.
 */
#ifndef KCSAND_MMAP_LOG_H
#define KCSAND_MMAP_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mmap_log;

/* Open the log on every CPU; NULL (and why, through pr_warn) when perf refuses. */
struct mmap_log *mmap_log__open(void);
void mmap_log__free(struct mmap_log *log);

/* Take the kernel's records so far. */
void mmap_log__drain(struct mmap_log *log);

/* An executable file mapping, as the kernel reported it. */
struct mmap_entry {
	uint64_t start, end, pgoff;
	const char *path;
};

/*
 * pid's executable mappings, in the order they were made (a later one
 * over the same addresses replaces an earlier one).  0, or -ENOENT when
 * the log does not know all of them (the process started before the log,
 * or records were lost).  Valid until the next drain or prune.
 */
int mmap_log__maps(struct mmap_log *log, pid_t pid, const struct mmap_entry **maps, size_t *nr);

/*
 * A number that changes whenever pid execs or is a new process (fork):
 * what was built from its mappings before is stale.  0: not seen so.
 */
uint64_t mmap_log__generation(struct mmap_log *log, pid_t pid);

/* Did the log see pid exit before ns (clock__now_ns())? */
bool mmap_log__exited_before(struct mmap_log *log, pid_t pid, uint64_t ns);

/* Forget the processes seen to exit before before_ns (their reports are out). */
void mmap_log__prune(struct mmap_log *log, uint64_t before_ns);

/*
 * Mark as exited now every process that is gone without an EXIT record read
 * after its FORK: a short child's EXIT, in its own CPU's ring, is often read
 * before the FORK its parent's CPU recorded, and the FORK then makes an entry
 * that nothing would let go of (one per pid the machine hands out).  The next
 * prune after the ring has emptied forgets them.
 */
void mmap_log__sweep(struct mmap_log *log);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * User stacks unwound by CFI (.eh_frame, .debug_frame) through libdwfl,
 * from the registers and the top of the stack that BPF copied
 * (struct kcsand_ustack), as perf's --call-graph dwarf does: the frames
 * of code built without frame pointers, which a frame-pointer walk loses.
 * docs/stacks.md has the design and its cost.
 *
 * A copy is unwound when it arrives, while its process still maps what it
 * mapped then, and only its frames are kept, under (pid, id), for the
 * report that names it (struct kcsand_access::ustack), which may come much
 * later for the history's remembered accesses.
 */
#ifndef KCSAND_UNWIND_H
#define KCSAND_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "kcsand.h"

struct unwinder;

struct unwind_stats {
	unsigned long copies;		/* records unwound */
	unsigned long frames;		/* frames they gave, all together */
	unsigned long failed;		/* gave no frame beyond the first */
	unsigned long cut;		/* ended at the end of a full copy (KCSAND_USTACK_SIZE) */
	unsigned long found, missed;	/* report sides that had frames kept, or not */
	uint64_t ns;			/* time spent unwinding */
	uint64_t bytes;			/* stack bytes copied (each record's size) */
};

struct unwinder *unwinder__new(void);
void unwinder__free(struct unwinder *u);

struct symbolizer;

/*
 * Unwind rec now and keep its frames; the objects they are in are
 * registered with sym (symbolizer__proc_add_bias), so that they can be
 * named after the process exited.  Negative errno when nothing was kept.
 */
int unwinder__add(struct unwinder *u, const struct kcsand_ustack *rec, struct symbolizer *sym);

/*
 * The frames kept for (pid, id): at most max pcs, the first the ip of the
 * copy's registers, the others return addresses.  Returns how many, or
 * -ENOENT when none are kept (the copy never came, or was forgotten).
 */
int unwinder__frames(struct unwinder *u, pid_t pid, uint64_t id, uint64_t *pcs, int max);

/* Take what the mmap log has: at every poll, before the copies are added. */
void unwinder__poll(struct unwinder *u);

/*
 * Let go of the sessions and frames of the processes the mmap log saw
 * exit before before_ns: every record they sent was read by then when
 * the ring buffer was emptied after before_ns, and their reports are out.
 */
void unwinder__release(struct unwinder *u, uint64_t before_ns);

/* Let go of the libdwfl sessions of processes that have exited, and mark the mmap log's gone
 * processes (mmap_log__sweep); how many sessions. */
size_t unwinder__forget_exited(struct unwinder *u);

void unwinder__stats(const struct unwinder *u, struct unwind_stats *out);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The history detector's daemon side: it finds the synchronization
 * functions of the libraries a target loads (libc's pthread_*, sem_*,
 * C11 threads; libgomp's GOMP_* and omp_*_lock) and the OpenMP outlined
 * functions of the target, probes them for that process only, turns the
 * BPF side on (bpf/history.bpf.h) and reads its counters.
 */
#ifndef KCSAND_HISTORY_H
#define KCSAND_HISTORY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "kcsand.h"

struct kcsand_bpf;
struct history;

struct history_stats {
	uint64_t ctr[KCSAND_HB_CTR_COUNT];	/* the BPF side's counters */
	unsigned long probes;			/* sync probes attached (entries, returns, rets) */
	unsigned long functions;		/* sync functions probed */
	unsigned long outlined;			/* OpenMP outlined functions probed */
};

/* Before the BPF object is loaded: its sync probes attach through uprobe_multi links. */
void history__before_load(struct kcsand_bpf *skel, bool multi);
/* The detector for a loaded BPF object; it stays off until a process is added. */
int history__new(struct kcsand_bpf *skel, bool multi, int verbose, struct history **out);
/*
 * Probe the sync functions of the libraries prog needs (DT_NEEDED,
 * transitively, searched in DT_RUNPATH, LD_LIBRARY_PATH and the system
 * directories) and prog's OpenMP outlined functions, for process pid only,
 * and give it a history.  Before the process runs: the probes follow it
 * through exec.  Returns 0 or a negative errno with a message.
 */
int history__add_process(struct history *hist, pid_t pid, const char *prog);
void history__get_stats(const struct history *hist, struct history_stats *out);
/* The -v line: what was probed and what the detector did. */
void history__print(const struct history *hist, FILE *out);
void history__free(struct history *hist);

/* The operation of a sync function of a library, by its name; KCSAND_HB_NONE if none. */
enum kcsand_hb_op history__op_of(const char *func);
/* Is name an OpenMP outlined function (gcc: "main._omp_fn.0")? */
bool history__is_outlined(const char *name);

#endif

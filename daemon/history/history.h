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
struct link_close;

struct history_stats {
	uint64_t ctr[KCSAND_HB_CTR_COUNT];	/* the BPF side's counters */
	unsigned long probes;			/* sync probes attached (entries, returns, rets) */
	unsigned long functions;		/* sync functions probed */
	unsigned long outlined;			/* OpenMP outlined functions probed */
	unsigned long pauses;			/* times the sync probes were taken off */
	unsigned long held;			/* processes held, then let go (history__poll) */
};

/*
 * The history's counters that `stats` and the summary both show, named
 * once: X(ID, name), ctr[KCSAND_HB_CTR_##ID].  What it traced and checked.
 */
#define HISTORY_STATS_SHOWN(X)				\
	X(SYNC_OPS, history_sync_ops)			\
	X(CHECKED, history_checked)

/*
 * The history's tracepoint programs, named once: X(program, tracepoint).
 * history__new() attaches them; an engine without the history leaves them
 * unloaded, with kcsand_hb_entry and kcsand_hb_return.
 */
#define HISTORY_TRACEPOINTS(X)				\
	X(kcsand_hb_fork, sched_process_fork)		\
	X(kcsand_hb_exit, sched_process_exit)		\
	X(kcsand_hb_exec, sched_process_exec)		\
	X(kcsand_hb_signal_send, signal_generate)	\
	X(kcsand_hb_signal_take, signal_deliver)

/* Before the BPF object is loaded: its sync probes attach through uprobe_multi links. */
void history__before_load(struct kcsand_bpf *skel, bool multi);
/* The detector for a loaded BPF object; it stays off until a process is added. */
int history__new(struct kcsand_bpf *skel, bool multi, struct history **out);
/*
 * Probe the sync functions of the libraries prog needs (DT_NEEDED,
 * transitively, searched in DT_RUNPATH, LD_LIBRARY_PATH and the system
 * directories) and prog's OpenMP outlined functions, for process pid only,
 * and give it a history.  Before the process runs: the probes follow it
 * through exec.  Returns 0 or a negative errno with a message.
 */
int history__add_process(struct history *hist, pid_t pid, const char *prog);
/*
 * Processes the BPF side holds (bpf/history.bpf.h): a forked child of a
 * process with a history, one that exec'd or dlopen'd, one found under
 * trace_all.  What each maps is probed for it now, and it is let go.
 * Cheap when nothing was held since the last call: call it in the poll loop.
 * Returns how many of them were new processes (not an exec or a dlopen).
 */
int history__poll(struct history *hist);
void history__get_stats(const struct history *hist, struct history_stats *out);
/*
 * Probe hits by threads that had no clock: past KCSAND_HB_MAX_THREADS alive
 * at once threads share slots (bpf/history_clock.bpf.h), so only one that
 * lost every race for a slot, or found hb_threads full.  Once there is one, an order through
 * such a thread's sync went unseen, and what the history finds may be no
 * race: the engine drops its reports from then on.
 */
uint64_t history__unclocked_hits(const struct history *hist);
/*
 * Releases whose clock entries could not all be raised (bpf/history_clock.bpf.h,
 * HB_CAS_TRIES): an edge lost, so the engine drops the history's reports
 * from the first one on, as for a thread without a clock.
 */
uint64_t history__lost_edges(const struct history *hist);
/* The -v line: what was probed and what the detector did. */
void history__print(const struct history *hist, FILE *out);
/*
 * Stop remembering (an access checked after its sync probes went would
 * look unordered) and hand the sync probes' link fds to b, to be closed
 * together: by history__pause(), and by the engine with its own links.
 */
void history__hand_links(struct history *hist, struct link_close *b);
void history__free(struct history *hist);

/*
 * Take the sync probes off (their links closed; nothing is remembered
 * meanwhile), and put them back through the files they were decoded from:
 * what was remembered before is forgotten, since the synchronization of the
 * pause went unseen.  Resuming returns 0, or a negative errno when a
 * process's probes could not be put back: the history then stays off.
 * Without uprobe_multi links, the probes are never taken off.
 */
void history__pause(struct history *hist);
int history__resume(struct history *hist);
/* CPU-ns the sync probes took so far: their traps at trap_ns each, and their BPF time. */
double history__cost_ns(const struct history *hist, double trap_ns);

/*
 * The sync probes' pacing (pace.c): their cost against budget times the
 * targets' own CPU time, both cumulative, in ns.  Pure, for the unit tests.
 */
struct hb_pace {
	double credit_ns;		/* what the probes may still take */
	double earned_ns, spent_ns;	/* by the targets' work, by the probes, so far */
	double native_ns, cost_ns;	/* at the last step */
	double advance_ns;		/* when a new process last got a start's credit */
	bool off;
};
enum hb_pace_action { HB_PACE_KEEP, HB_PACE_PAUSE, HB_PACE_RESUME };
void hb_pace__init(struct hb_pace *p);
enum hb_pace_action hb_pace__step(struct hb_pace *p, double native_ns, double cost_ns,
				  double budget);
/* A new process: a start's credit again, at most once a second; true if given. */
bool hb_pace__new_run(struct hb_pace *p, double now_ns);

/* The operation of a sync function of a library, by its name; KCSAND_HB_NONE if none. */
enum kcsand_hb_op history__op_of(const char *func);
/*
 * Does the sync function func return holding a lock that protects what its
 * caller reads next (a mutex's lock, a condition's wait, a critical's start)?
 * table.c says which, and why trylocks count and semaphores do not.
 */
bool history__returns_locked(const char *func);
/* Is name an OpenMP outlined function (gcc: "main._omp_fn.0")? */
bool history__is_outlined(const char *name);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hardware watchpoints' internals, shared by hwbp.c (slots, arming,
 * escalation, watches), watch_resolve.c (what a spec names) and
 * trap_decode.c (a trap's access).  Nothing outside hw/ includes it.
 */
#ifndef KCSAND_HWBP_INT_H
#define KCSAND_HWBP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "kcsand.h"
#include "hwbp.h"
#include "sites/kcore.h"

struct bpf_link;
struct kcsand_bpf;
struct ksyms;

/* A slot's perf event: the link owns the event's fd (libbpf closes it with the link). */
struct hw_event {
	struct bpf_link *link;
	int owner;			/* the event's thread (user mode) or CPU (kernel mode) */
};

/*
 * One slot and its perf events: one per thread of pid (user mode), or one per
 * online CPU (kernel mode, pid -1).
 */
struct hw_slot {
	enum kcsand_hw_mode mode;	/* KCSAND_HW_OFF: free */
	pid_t pid;
	uint64_t addr;
	unsigned int len;
	uint32_t gen;
	uint64_t armed_ns, until_ns, paired_ns;
	struct hw_event *ev;
	size_t n, cap;
	struct kcsand_report watcher;	/* escalation: the unknown-origin report */
	pid_t skip_tid;			/* history: the reader, whose own writes are ordered */
};

struct hwbp {
	struct kcsand_bpf *skel;
	struct bpf_program *prog;	/* the trap's, loaded: skel's or load's */
	hwbp_load_fn *load;		/* loads it at the first watchpoint armed */
	void *load_ctx;
	hwbp_site_flags_fn *site_flags;	/* a probed site's marking, or NULL */
	void *site_ctx;
	bool kernel;			/* kernel addresses, per-CPU events */
	const char *no_traps;		/* user mode: why debug registers are of no use here */
	bool told;			/* no_traps was said once for escalation */
	struct kcore kc;		/* kernel mode: the value at arming, opened on first use */
	struct ksyms *ks;		/* kernel mode: functions to decode a trap in, loaded then */
	struct hw_slot s[KCSAND_HW_SLOTS];
	unsigned int max_slots;		/* of s[], the first max_slots may be used */
	struct bpf_program *hb_prog;	/* the history's watches' trap program, once loaded */
	unsigned int hb_max;		/* slots the history's watches may hold at once */
	uint64_t hb_room_ns;		/* when hb_watch_room was last filled */
	uint64_t hb_count_ns;		/* when the watched threads' switches were last counted */
	/* The threads a watch was armed in at that count, and their switches then. */
	struct hb_thread {
		pid_t pid, tid;
		unsigned long long switches;
	} *hb_thr;
	size_t hb_nthr;
	bool hb_paused;			/* the history's share of the budget is spent: none armed */
	/* Asked for before hb_prog was in: armed when it is (hb_watch.c). */
	struct hb_pending {
		struct kcsand_hb_watch rq;
		uint64_t at_ns;		/* 0: none */
	} hb_pend[KCSAND_HW_SLOTS];
	uint32_t gen;
	struct hwbp_stats st;
};

/* Close slot i's events and free it. */
void hwbp_disarm(struct hwbp *hw, int i);
/*
 * Slot i's breakpoint on each thread of its process that has none yet (but
 * its skip_tid): 0, or a negative errno when no thread has one.
 */
int hwbp_sweep_threads(struct hwbp *hw, int i);
/* The history's watches at each tick (hb_watch.c): what BPF may ask for next. */
void hwbp_hb_tick(struct hwbp *hw);

/*
 * A kernel or module variable named name, from /proc/kallsyms: -ENOTUNIQ
 * when several are, -ENOENT when none is (watch_resolve.c).
 */
int hwbp_resolve_ksym(const char *name, uint64_t *addr, uint64_t *size);

#endif

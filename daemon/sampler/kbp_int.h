/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Code-breakpoint sampling's internals, shared by its files (kbp.h says
 * what it does):
 *   kbp.c           start and stop: kbp__new(), kbp__free(), the pinned sites;
 *   kbp_event.c     the perf breakpoint events, one per CPU and register:
 *                   opened, moved, parked and closed, and the BPF slots;
 *   kbp_mover.c     the per-CPU movers that own those events, the lead's
 *                   tick, CPU hotplug and the stop;
 *   kbp_place.c     placements: which site a register takes next, from
 *                   which source, and when its placement ends;
 *   kbp_evidence.c  which functions ran (kernel IP samples, fires): the
 *                   warm queue's sites;
 *   kbp_budget.c    what sampling costs against the CPU time, once a second,
 *                   and a trap's calibrated cost;
 *   kbp_stats.c     the coverage lines (-v) and the summary's counters.
 * Nothing outside sampler/ includes it.
 */
#ifndef KCSAND_KBP_INT_H
#define KCSAND_KBP_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include "kbp.h"
#include "kip.h"
#include "kcsand.h"

struct bpf_link;
struct kcsand_bpf;

#define KBP_MAX_CPUS	KCSAND_KXBP_MAX_CPUS
/* Sites tried in a row when the kernel refuses addresses, before a register waits a tick. */
#define KBP_MAX_TRIES	16
/* The checks of one placement are at least a tick over this apart (spread, not a burst). */
#define KBP_CHECK_SPREAD	4
#define KBP_COVERAGE_NS		60000000000ull
/*
 * Kernel IP samples a second and CPU, for the evidence: a few hundred find
 * a workload's functions within seconds, and cost a timer interrupt each
 * (counted in the budget at a trap's cost).
 */
#define KBP_IP_HZ		250
/*
 * How long kbp__free() waits for a mover to stop: a real-time thread whose
 * stop is a broadcast, it ends within a tick even under emulation; longer
 * means its CPU does not run it.
 */
#define KBP_STOP_MS		10000

/* seen[] bits of a site. */
enum {
	SEEN_PLACED = 1,	/* a register was put on it */
	SEEN_REFUSED = 2,	/* the kernel would not break there */
	SEEN_RAN = 4,		/* it trapped in a placement: the code ran */
	SEEN_CHECKED = 8,	/* a trap of it ran the check */
	SEEN_WARM = 16,		/* its function ran: it went to the warm queue */
	SEEN_PIN = 32,		/* pinned (--pin): in register 0's own cycle */
	SEEN_HOT = 64,		/* it fires a tick or more (kbp_policy__hot): in hot[] */
};

/* One CPU: its events, one per register, and the thread that moves them. */
struct kbp_cpu {
	struct kbp *k;
	int cpu;
	int fd[KCSAND_KXBP_SLOTS];
	struct bpf_link *link[KCSAND_KXBP_SLOTS];
	uint64_t gen[KCSAND_KXBP_SLOTS];	/* the placement each register is on (its mover's) */
	pthread_t mover;
	bool started;
	bool online;			/* at start, then as the hotplug scan saw it */
	_Atomic bool down;		/* went offline: its mover stops */
	bool pinned;			/* the mover runs on this CPU: local moves */
	bool opened_away;		/* an open of its events was not on it (kbp_visit): IPIs */
	bool released;			/* its mover closed its events, on the CPU, at the stop */
	bool parked[KCSAND_KXBP_SLOTS];	/* disabled: the budget took the register away */
	struct kip_ring ip;		/* its kernel IP samples (fd -1: none) */
	_Atomic uint64_t moves, move_ns;	/* written by the mover, read for stats */
	_Atomic uint64_t cpu_ns;		/* the mover's own CPU time, its moves included */
};

/* Register r's placement, the same on every CPU (under kbp.lock). */
struct kbp_reg {
	uint64_t gen;			/* bumped at each placement; 0: none (parked) */
	uint32_t i;			/* the site, an index of addr[] */
	uint64_t since_ns;		/* placed at */
	enum kbp_source from;		/* where its site came from */
	bool pin;			/* a pinned placement (--pin): no source's */
	unsigned int ticks;		/* its timeout, in ticks */
	uint64_t fired_ns;		/* the lead first saw it trap; 0: not yet */
	bool capped;			/* a live linger ended by its traps (KBP_LIVE_TRAPS) */
};

/* The budget's view of the last interval (the lead only). */
struct kbp_control {
	uint64_t t_ns, hits, checked, bpf_ns, move_ns, ips;
	bool primed;
};

/* What the lead counts of placements (read for stats without the lock). */
struct kbp_tally {
	_Atomic uint64_t placements, fired, timeouts;
	_Atomic uint64_t capped;		/* live lingers ended by their traps */
	_Atomic size_t ran, checked;		/* sites, at least once */
	_Atomic uint64_t from[KBP_SOURCES], fired_from[KBP_SOURCES];	/* placements by source */
	uint64_t held_ns, fired_ns;		/* register time of ended placements, of fired ones */
	uint64_t held_from[KBP_SOURCES];	/* by source, as held (spent_ns has the idle's rise) */
	_Atomic uint64_t ips;			/* kernel IP samples read */
	size_t warm_fns;			/* functions seen running */
	_Atomic size_t pin_ran, pin_checked;	/* of them, pinned */
	_Atomic uint64_t pin_placements;
	size_t ran_then, checked_then;		/* at the last coverage line */
	uint64_t coverage_ns;			/* its time */
	unsigned int minute;
};

/*
 * A shuffled cycle over sites and its passes: the whole cycle's, and the
 * pinned sites' own (the lead only; passes is read by the stats too).
 * kbp_cycle_next() walks one.
 */
struct kbp_cycle {
	uint32_t *order;		/* site indices, reshuffled at each pass */
	size_t n;
	uint64_t cursor;		/* the next position */
	_Atomic uint64_t passes;	/* complete passes over order */
};

struct kbp {
	struct kcsand_bpf *skel;
	struct kbp_opts o;
	uint64_t *addr;
	uint32_t *site;
	struct kbp_cycle cycle;		/* over every site (order: the lead only, after start) */
	uint8_t *misses;		/* timeouts in a row, up to KBP_MAX_MISSES (the lead only) */
	_Atomic uint8_t *seen;		/* SEEN_* */
	size_t n;
	/* The evidence (the lead only; kbp.h): functions, the warm queue, the live list. */
	struct kbp_fnrec *fns;		/* sorted by start; NULL: no functions given */
	size_t nfns;
	uint32_t *fid;			/* a site's function, an index of fns[] */
	uint32_t *byfn;			/* site indices by function: fns[f].first, .count */
	uint8_t *fwarm;			/* a function's sites went to the warm queue */
	uint32_t *warm;			/* a FIFO of n: a site enters it once (SEEN_WARM) */
	size_t warm_head, warm_tail;
	uint32_t *live;			/* the sites that fired, in the order they first did */
	size_t nlive, live_cur;
	uint64_t live_passes;		/* over live[]: a site that timed out waits some (due) */
	uint32_t *hot;			/* live sites that fire a tick or more (kbp_policy__hot) */
	size_t nhot, hot_cur;
	uint64_t hot_passes;
	/* A site's traps and the register time its placements held: its weight (kbp.h). */
	uint64_t *fires, *held_ns;
	bool hot_turn;			/* every other live placement is hot[]'s */
	/* Register time each source's ended placements held (kbp_policy__source's shares). */
	uint64_t spent_ns[KBP_SOURCES];
	struct perf_event_attr attr;	/* as opened: MODIFY_ATTRIBUTES wants it unchanged but bp_addr */
	struct kbp_cpu cpu[KBP_MAX_CPUS];	/* every CPU the machine may bring online */
	struct kbp_cpu *lead;		/* its mover places, runs the budget and the hotplug scan */
	uint64_t hotplug_ns;		/* the last scan (the lead only) */
	unsigned int ncpus, nregs;
	struct kbp_reg reg[KCSAND_KXBP_SLOTS];	/* under lock */
	uint64_t period_ns;		/* the tick; under lock, read alone for stats */
	unsigned int regs;		/* in use; under lock */
	struct kbp_cycle pin;		/* the pinned sites' own cycle (the lead only) */
	bool pin_turn;			/* one register in use: this placement is the pinned cycle's */
	uint64_t gens;			/* placements made, the last one's generation */
	uint64_t t0_ns;			/* sampling started */
	unsigned int seed;		/* of the reshuffles (the lead only) */
	struct kbp_control ctl;
	struct kbp_tally tally;
	double trap_ns;
	_Atomic unsigned int min_period_us, max_period_us, min_regs;
	_Atomic uint64_t overhead_ppm;	/* the last interval's share */
	_Atomic size_t sampled, refused;
	_Atomic uint64_t old_hits, old_checks, old_ns;	/* of the slots' earlier sites */
	pthread_mutex_t lock;		/* with wake: the placements, and stop sleeping movers */
	pthread_cond_t wake;
	bool sync;			/* lock and wake initialized */
	bool stop;
	bool lead_done;			/* the lead left its loop: it drains no CPU's IP ring */
};

/* A function of the evidence: its range, and its sites in byfn[]. */
struct kbp_fnrec {
	uint64_t start, end;
	uint32_t first, count;
};

/* Set bit on site i; true when it was not set before. */
static inline bool kbp_mark_site(struct kbp *k, size_t i, uint8_t bit)
{
	return !(atomic_fetch_or(&k->seen[i], bit) & bit);
}

/* kbp_event.c: the events of register r on CPU c (the movers own them, see kbp_mover.c). */
int kbp_open_event(struct kbp *k, struct kbp_cpu *c, unsigned int r, size_t i);
void kbp_close_event(struct kbp_cpu *c, unsigned int r);
void kbp_close_cpu_events(struct kbp_cpu *c);
void kbp_move(struct kbp *k, struct kbp_cpu *c, unsigned int r, size_t i);
void kbp_park(struct kbp_cpu *c, unsigned int r);
void kbp_visit(struct kbp_cpu *c);
int kbp_open_regs(struct kbp *k);

/* kbp_mover.c: the CPUs, their movers, and the lead's tick. */
int kbp_all_cpus(struct kbp *k);
int kbp_start_movers(struct kbp *k);
bool kbp_stop_movers(struct kbp *k);

/* kbp_place.c: the lead's placements, under kbp.lock once the movers run. */
void kbp_shuffle(struct kbp *k, uint32_t *order, size_t n);
long kbp_next_for(struct kbp *k, unsigned int r, enum kbp_source *from, bool *pin);
void kbp_place(struct kbp *k, unsigned int r, uint32_t i, enum kbp_source from, bool pin,
	       uint64_t now);
bool kbp_schedule(struct kbp *k, uint64_t now);

/* kbp_evidence.c: functions seen running. */
void kbp_warm_fn(struct kbp *k, uint32_t f);
void kbp_drain_ips(struct kbp *k);
int kbp_index_functions(struct kbp *k, const struct kbp_fn *fn);
void kbp_open_ips(struct kbp *k);

/* kbp_budget.c: the cost, and the period and registers it sets. */
void kbp_slots_sum(const struct kbp *k, uint64_t *hits, uint64_t *checked, uint64_t *ns);
void kbp_budget_tick(struct kbp *k, uint64_t now);
double kbp_calibrate_trap(struct kbp *k);

/* kbp_stats.c: what -v prints and the summary reads. */
void kbp_print_coverage(struct kbp *k, const char *when);
void kbp_coverage_minute(struct kbp *k, uint64_t now);

#endif

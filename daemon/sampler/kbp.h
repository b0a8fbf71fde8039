/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Code-breakpoint sampling in kernel mode, after DataCollider (OSDI 2010):
 * no kprobe per site.  Debug register r of every CPU executes-breaks on one
 * site at a time (a perf breakpoint event per CPU and register,
 * HW_BREAKPOINT_X, kernel only, with the engine's kcsand_kxbp program).  A
 * register keeps its site until the site runs (fires) or the placement
 * times out, then moves on to the next site of a cycle over all sites,
 * reshuffled at each pass (PERF_EVENT_IOC_MODIFY_ATTRIBUTES, each CPU's by
 * a thread of its own).  A hot site gives its register back at once and a
 * cold one keeps it long enough to run, so each site that runs gets a
 * chance, not just equal time; nothing traps but the sampled sites.
 *
 * At subsystem scale most sites never run under a workload, and a cycle
 * over them all takes hours.  So placements also go where there is
 * evidence of running (kbp_policy__source): the sites of functions a
 * cpu-clock sampler saw running (kip.h) or whose other sites fired (warm),
 * and the sites that fired before (live), each source by its share of the
 * register time.  The cycle keeps a fifth of it, so that every site still
 * comes round, and a site with no evidence waits KBP_COLD_TICKS ticks
 * instead of KBP_TIMEOUT_TICKS.
 */
#ifndef KCSAND_KBP_H
#define KCSAND_KBP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kcsand_bpf;

struct kbp_opts {
	unsigned int nregs;		/* debug registers per CPU to use, 1..4 */
	unsigned int period_us;		/* the tick at which placements end: the first */
	double budget;			/* share of the machine's own CPU time; 0: a fixed period */
	uint64_t calib_addr;		/* kernel code to time a trap on (getppid); 0: none */
	unsigned int seed;		/* the cycle's shuffle */
	/*
	 * Sites to check every time round (--pin), NULL or n flags: register 0
	 * cycles over them alone, so that they are placed whatever the size of
	 * the whole cycle (with one register in use, every other placement).
	 */
	const bool *pin;
};

/* Where the budget moves the period, and how often it looks. */
#define KBP_MIN_PERIOD_US	2000u
#define KBP_MAX_PERIOD_US	1000000u
#define KBP_CONTROL_NS		1000000000ull

struct kbp_stats {
	size_t sites;			/* in the cycle */
	size_t sampled;			/* placed at least once */
	size_t ran;			/* of them, trapped in a placement: the code ran */
	size_t checked_sites;		/* of them, checked at least once */
	uint64_t placements, fired, timeouts;	/* ended: by a trap, or after the timeout */
	uint64_t capped;		/* live placements ended by their traps (KBP_LIVE_TRAPS) */
	size_t refused;			/* addresses the kernel would not break on */
	unsigned int nregs, ncpus;
	uint64_t cycles;		/* complete passes over the cycle */
	uint64_t retargets;		/* register moves, one CPU's event each */
	uint64_t retarget_ns;		/* time spent moving them */
	uint64_t hits;			/* traps on a sampled site */
	uint64_t checked;		/* of them, those that ran the check (KCSAND_KXBP_CHECKS) */
	unsigned int pinned;		/* CPUs whose mover runs on them (local moves) */
	unsigned int period_us;		/* now */
	unsigned int min_period_us, max_period_us;	/* over the run */
	unsigned int min_regs;		/* the fewest registers sampling had */
	double trap_ns;			/* one trap, calibrated at start (0: unknown) */
	double overhead;		/* the cost's share of the machine's own time, last second */
	/*
	 * The movers' own CPU time (their moves, the lead's placements, budget and
	 * scans), and the wall time since sampling started: shown beside the
	 * budget, not counted in it (docs/kernel-mode.md, "The budget").
	 */
	uint64_t movers_cpu_ns, elapsed_ns;
};

/*
 * The budget's rule, a pure function of the last interval's measured share
 * (moves, checks and traps over the machine's own CPU time): over the
 * budget, a longer period first (every per-placement cost is paid 1/period
 * times a second), then one register fewer once the period is at max_us
 * (only the traps of hot sites are left, and they follow the registers);
 * under half the budget, registers back first, then a shorter period.  The
 * period aims at 70% of the budget and changes by 4x at most per call.
 */
struct kbp_plan {
	unsigned int period_us;
	unsigned int regs;		/* in use, 1..nregs */
};
void kbp_policy__next(struct kbp_plan *p, double share, double budget, unsigned int nregs,
		      unsigned int min_us, unsigned int max_us);

/*
 * How long a placement waits for its site to run: ticks ticks
 * (KBP_TIMEOUT_TICKS for a site with evidence of running, KBP_COLD_TICKS
 * for one with none), at most KBP_MAX_TIMEOUT_NS (or one tick, when a tick
 * is longer).  A site that runs less often than its wait is caught in
 * proportion to the wait either way, and one that runs more often gives
 * its register back sooner: for code that never showed it runs, a shorter
 * wait covers more sites in the same register time.
 */
#define KBP_TIMEOUT_TICKS	32
#define KBP_COLD_TICKS		8
#define KBP_MAX_TIMEOUT_NS	4000000000ull
uint64_t kbp_policy__timeout_ns(uint64_t period_ns, unsigned int ticks);

/*
 * Where the next placement takes its site from: the source furthest below
 * its share of the register time (KBP_SHARE_PCT: the cycle, warm, live),
 * given the time each source's placements held a register so far
 * (spent_ns) and which sources have a site.  By time, not by turns: a
 * cold site's placement holds its register 8 to 32 ticks, a live site's
 * one or two, so one turn in four for the cycle and two for warm gave the
 * sites that fired about a tenth of the time (docs/kernel-mode.md).  A
 * source with nothing is raised level with the others (spent_ns is
 * updated), so that it does not bank the time it could not use and take
 * every turn when it has sites again.  Ties go to live, then warm; with no
 * evidence the cycle has every turn.  -1: none has one.
 */
enum kbp_source { KBP_CYCLE, KBP_WARM, KBP_LIVE, KBP_SOURCES };
#define KBP_SHARE_PCT		{ [KBP_CYCLE] = 20, [KBP_WARM] = 20, [KBP_LIVE] = 60 }
int kbp_policy__source(uint64_t spent_ns[KBP_SOURCES], const bool have[KBP_SOURCES]);

/*
 * Is site i due in pass `passes`, after `misses` placements in a row that
 * timed out?  Every pass with none, then every 2nd, 4th, ... 2^misses-th
 * (misses <= KBP_MAX_MISSES), each site in its own passes (by its index), so
 * that dead code costs the cycle less and does not come back all at once.
 */
#define KBP_MAX_MISSES		6
bool kbp_policy__due(unsigned int misses, uint64_t passes, size_t i);

/*
 * When a live placement that fired ends (kbp.c's placement_over): it stays
 * for its checks, KBP_LIVE_CHECKS of them, or KBP_LIVE_LINGER ticks after
 * the fire, whichever comes first, or once its traps reach KBP_LIVE_TRAPS.
 * A check is spread a quarter tick from the last and each stall is followed
 * by a rest, so a site that runs thousands of times a second waits for its
 * checks while every run traps: 300 traps a placement for 3 checks in the
 * guest (kernel-sampler's share step), 2.07 million traps in ten minutes at
 * fs/ mm/ kernel/ scale, which made the budget stretch the tick to 1 s, and a
 * longer tick only lengthens the linger.  Past KBP_LIVE_TRAPS the site has
 * shown it runs often: a later placement of it is cheaper than its traps.
 */
#define KBP_LIVE_CHECKS		8
#define KBP_LIVE_LINGER		8
#define KBP_LIVE_TRAPS		64
enum kbp_linger { KBP_LINGER_ON, KBP_LINGER_CHECKED, KBP_LINGER_TRAPS, KBP_LINGER_TICKS };
enum kbp_linger kbp_policy__linger(uint64_t hits, uint64_t checks, uint64_t since_fire_ns,
				   uint64_t period_ns);

/*
 * A site's weight, after DataCollider's readjusting by fired breakpoints per
 * second: its fires a second over the register time its placements held
 * (fires, held_ns; every CPU's traps), in ticks (period_ns): one fire a tick
 * is what a lingering live placement needs for its KBP_LIVE_CHECKS checks
 * within its KBP_LIVE_LINGER ticks.  The live and hot rings place a site
 * with this probability (kbp_place.c): a site that fires a few times a
 * minute costs a placement that mostly times out, one that fires each tick
 * or more gives its checks; past one a tick more fires are traps, not
 * checks (the spread), so the weight stops at 1.  Unmeasured (held less than
 * KBP_LIVE_LINGER ticks): 1, so that it is measured; never below
 * KBP_WEIGHT_MIN, so that a slow site still comes round.  kbp_policy__hot():
 * measured at one fire a tick or more, the site joins the hot ring.  By rate,
 * not by the checks one placement took (8 of them, kern14): a site whose
 * placements the trap bound ends took 2 or 3 checks however fast it runs.
 */
#define KBP_WEIGHT_MIN		(1.0 / 16)
double kbp_policy__weight(uint64_t fires, uint64_t held_ns, uint64_t period_ns);
bool kbp_policy__hot(uint64_t fires, uint64_t held_ns, uint64_t period_ns);

struct kbp;

/* A site's function, [start, end): the sites of one function share their evidence. */
struct kbp_fn {
	uint64_t start, end;
};

/*
 * Open nregs breakpoint events per online CPU on the first sites of a
 * shuffled cycle over addr[i] (site index site[i], function fn[i]; fn NULL:
 * no evidence but the sites' own fires), with the program attached.  Fewer
 * registers when the CPUs have fewer free; -errno with a message when none
 * could be had.
 */
int kbp__new(struct kcsand_bpf *skel, const uint64_t *addr, const uint32_t *site,
	     const struct kbp_fn *fn, size_t n, const struct kbp_opts *o, struct kbp **out);
void kbp__stats(const struct kbp *k, struct kbp_stats *st);
void kbp__free(struct kbp *k);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The site sampler, after DataCollider (Erickson et al., OSDI 2010): arm a
 * subset of the sites so that the estimated overhead stays within
 * --overhead-budget, and readjust the subset every period from each site's
 * measured hit rate and the measured cost of a hit.  Rarely-hit sites stay
 * armed; hot sites take short turns, in a random order that gives each of
 * them a turn once a cycle.  Each site backs off as it executes, after
 * LiteRace (Marino et al., PLDI 2009): it starts armed whatever it costs,
 * and the hits it takes while armed lower the share of the time it may be
 * armed in turns, 100%, 10%, 1%, 0.1% (struct site_backoff).
 *
 * The sampler knows its engine only through struct sampler_ops: it arms
 * and reads parameters through them, and includes nothing of engine/.
 */
#ifndef KCSAND_SAMPLER_H
#define KCSAND_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kcsand_bpf;
struct sampler;

/* The live parameters the sampler reads each tick. */
struct sampler_params {
	double budget;			/* the sites' share of overhead_budget, %; 100 arms every site */
	unsigned int warmup_cpu_ms;	/* sampler_warmup_cpu_ms: every site armed until then */
	unsigned int period_ms;		/* sampler_period_ms */
	unsigned int turn_ms;		/* sampler_turn_ms */
	unsigned int backoff_hits;	/* sampler_backoff_hits */
	unsigned int level0_cpu_ms;	/* sampler_level0_cpu_ms */
	unsigned int start_credit_ms;	/* sampler_start_credit_ms; 0: level 0 unbounded */
};

/*
 * What the sampler needs of the engine that owns it; ctx is the engine.
 * rearm and turn are engine__rearm and engine__turn (engine.h); trap_ns
 * measures a probe trap on fn, a function of this process that the BPF
 * program leaves at once (0: not measurable).
 */
struct sampler_ops {
	size_t (*nr_sites)(void *ctx);
	void (*get_params)(void *ctx, struct sampler_params *p);
	int (*rearm)(void *ctx, const uint8_t *armed);
	int (*turn)(void *ctx, const uint8_t *armed, const uint8_t *turn);
	double (*trap_ns)(void *ctx, void (*fn)(void), int calls);
	/*
	 * CPU-ns the engine's other probes took so far, cumulative (the
	 * history detector's sync probes): not the program's own work.  May be
	 * NULL.
	 */
	double (*other_probes_ns)(void *ctx);
};

/*
 * Per-site backoff.  A site starts at level 0, armed whatever it costs,
 * outside the budget: cold code, where most races of a test program are,
 * is probed in full, and so is code that first runs late, such as the
 * parallel phase after a long serial initialization.  backoff_hits * 10^L
 * hits taken while armed at level L move it down a level; at level L a hot site
 * may be armed in turns for at most 10^-L of the time since it entered
 * the level.  Cold sites that fit the budget stay armed at any level.
 */
#define SITE_BACKOFF_LEVELS	4	/* 100%, 10%, 1%, 0.1% */

struct site_backoff {
	uint64_t hits;			/* hits while armed, at this level */
	uint64_t since_ns;		/* when the site entered this level */
	uint64_t first_cpu_ns;		/* the targets' CPU time at its first hit */
	double turn_ns;			/* time armed in hot turns since then */
	uint8_t level;
};

/*
 * Count hits taken while armed; true when they moved the site down a level:
 * backoff_hits of them at level 0, ten times as many at each level below,
 * as each is armed a tenth as often.  Level 0 also ends once the targets
 * have run level0_cpu_ns of CPU time since the site's first hit, however
 * few hits that was: a trap costs tens of µs, so a loop of many sites gives
 * each only a few hundred hits a second.  CPU time (cpu_ns, the targets'
 * so far), so that a loaded machine does not cut level 0 short.
 */
bool site_backoff__hit(struct site_backoff *b, uint64_t hits, unsigned int backoff_hits,
		       uint64_t level0_cpu_ns, uint64_t now_ns, uint64_t cpu_ns);
/*
 * Level 0 ended early: the cold start's credit is spent (sampler.c, "The
 * cold start's credit").  No-op past level 0.
 */
void site_backoff__demote(struct site_backoff *b, uint64_t now_ns);
/*
 * The cold start's credit (sampler.c): add what the program's own time
 * earned (budget, a fraction, times native_ns), take what the cold start
 * spent, keep at most cap_ns.  True when it ran out; the credit is then 0.
 */
bool cold_credit__charge(double *credit_ns, double cap_ns, double budget, double native_ns,
			double spent_ns);
/* Have the targets run level0_cpu_ns since a level-0 site's first hit? */
bool site_backoff__level0_over(const struct site_backoff *b, uint64_t level0_cpu_ns,
			       uint64_t cpu_ns);
/* Share of the time a site at its level may be armed: 1, 0.1, 0.01, 0.001. */
double site_backoff__share(const struct site_backoff *b);
/* May a hot site take a turn at now_ns: its turns so far within its share? */
bool site_backoff__may_turn(const struct site_backoff *b, uint64_t now_ns);

struct sampler_stats {
	size_t armed;			/* sites armed now */
	size_t total;			/* sites known */
	double est_overhead;		/* expected from the policy, a fraction of native time */
	double measured_overhead;	/* over the last period */
	double sampled_overhead;	/* measured since the warm-up ended */
	double trap_ns;			/* calibrated cost of a trap with no BPF work */
	double xbp_trap_ns;		/* the same for an execute breakpoint */
	/*
	 * Kernel mode: disarmed sites still trap.  floor_overhead is what
	 * every hit's trap cost since start, per unit of native time: the
	 * budget cannot go under it and does not count it.
	 */
	bool kernel;
	double floor_overhead;
	unsigned long long unarmed_hits;	/* hits of disarmed sites (they ran no check) */
	unsigned long periods;
	unsigned long rearms;
	unsigned long turns;		/* hot turns taken */
	unsigned long xbp_turns;	/* of them, on one thread by execute breakpoints */
	size_t levels[SITE_BACKOFF_LEVELS];	/* sites at each backoff level */
	unsigned long backoffs;		/* early ticks: a level-0 site used its hits */
	unsigned long cold_outs;	/* the cold start's credit ran out (sites demoted) */
	double cold_ms;			/* CPU-ms the cold start (warm-up, level 0) took */
	double rearm_ms;		/* the last re-attach */
	double native_ns;		/* the targets' own CPU time so far, probes taken out */
	double cpu_ns;			/* the targets' CPU time so far, probes included */
};

/*
 * The pure policy, separate for the unit tests.  x[i] is site i's overhead
 * while armed (its probe time per unit of the program's own time); known[i]
 * false means not measured yet, and the site is armed to learn it.  Cold
 * sites, each under a quarter of the budget, stay armed while together
 * they fit half of it: armed[i] = 1.  The others are hot (hot[i] = 1): a
 * hot site keeps its threads in traps, so hot sites take turns, a few at a
 * time, for *hot_share of the time: the share that keeps the overhead
 * within budget given what a turn costs (turn_cost: its share of the
 * target's CPU time).  Returns the expected overhead.
 */
double sampler__choose(const double *x, const bool *known, size_t n, double budget,
		       double turn_cost, uint8_t *armed, uint8_t *hot, double *hot_share);

/*
 * Which hot sites a turn arms: a cycle through the hot sites in a random
 * order, drawn anew when it is done, so every hot site has its turn once a
 * cycle.  Drawing each turn at random instead left a site without a turn
 * for long stretches (geometric waits; docs/PERFORMANCE.md, "Figures
 * behind the code").
 */
struct hot_cycle {
	size_t *v;		/* site indices, in the order of the turns */
	size_t len, pos, cap;
};

/* Set armed[i] for the next k sites of the cycle that are still hot; returns how many. */
size_t hot_cycle__next(struct hot_cycle *c, const uint8_t *hot, size_t n, size_t k,
		       uint64_t *rng, uint8_t *armed);
void hot_cycle__free(struct hot_cycle *c);

/*
 * Before the BPF object is loaded: size the statistics map for capacity
 * sites; use_bitmap (kernel mode) makes the probes test the disarmed-sites
 * bitmap (ksampler.h).
 */
int sampler__prepare(struct kcsand_bpf *skel, size_t capacity, bool use_bitmap);
/*
 * After load and attach: calibrate the trap cost and start with every site
 * armed.  kernel: arm by the bitmap and measure the machine's CPU time.
 */
int sampler__new(const struct sampler_ops *ops, void *ctx, struct kcsand_bpf *skel,
		 size_t capacity, bool kernel, struct sampler **out);
/* The trap calibrations' target: a function of kcsand's own, which the programs leave at once. */
void sampler_calib_target(void);
/* Called from the engine's poll loop: readjusts the armed set once a period. */
void sampler__tick(struct sampler *s);
/* A new process of the targets: every site back to level 0 and the cold start's credit. */
void sampler__new_run(struct sampler *s);
/* Milliseconds until sampler__tick() has work: a poll loop waits no longer. */
int sampler__timeout_ms(const struct sampler *s);
/* The calibrated cost of an execute-breakpoint trap, once measured (0: keep the uprobe's). */
void sampler__set_xbp_trap_ns(struct sampler *s, double ns);
void sampler__get_stats(const struct sampler *s, struct sampler_stats *out);

/*
 * The sampler's figures that `stats` and the summary both show, named once:
 * X(ID, name, kernel_only).  `stats` shows the kernel engine's under
 * "kernel_" + name, beside the user engine's.  Each is one whole number:
 * the overheads are percentages of native time, rounded.
 */
#define SAMPLER_FIGURES(X)					\
	X(ARMED, armed_sites, false)				\
	X(TOTAL, total_sites, false)				\
	X(TURNS, hot_turns, false)				\
	X(OVERHEAD, estimated_overhead_pct, false)		\
	X(FLOOR, trap_floor_pct, true)

#define SAMPLER_FIG_ENUM(ID, name, kernel_only) SAMPLER_FIG_##ID,
enum sampler_figure {
	SAMPLER_FIGURES(SAMPLER_FIG_ENUM)
	SAMPLER_FIG_COUNT,
};
#undef SAMPLER_FIG_ENUM

/* st's figures in SAMPLER_FIGURES' order; one's name; whether st's engine shows it. */
void sampler_stats__figures(const struct sampler_stats *st, uint64_t out[SAMPLER_FIG_COUNT]);
const char *sampler_figure__name(enum sampler_figure f);
bool sampler_figure__shown(enum sampler_figure f, const struct sampler_stats *st);
void sampler__free(struct sampler *s);

#endif

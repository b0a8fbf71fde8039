// SPDX-License-Identifier: GPL-2.0-only
/*
 * The site sampler.  See sampler.h for the policy and bpf/sampler.bpf.h for
 * the counters it reads.
 *
 * The model.  A site armed for a period costs load_i = (hits_i * trap_ns +
 * bpf_ns_i) / period CPU-seconds per second: its hits times the trap cost
 * (calibrated at start: a uprobe on a function of our own, which the BPF
 * program leaves at once) plus what the BPF program measured itself,
 * watchpoint stalls included.  The target used U CPU-seconds per second in
 * the period (/proc/PID/stat); probes take their load out of that, so the
 * program's own work is U - L and the overhead is L / (U - L).  Keeping it
 * within the budget B means L <= U * B / (1 + B).  A site keeps the load
 * measured when it was last armed; a site never armed yet is armed, to
 * learn it.
 *
 * Re-attaching.  In user mode an unarmed site must be detached, since the
 * trap is the cost; an object's sites are linked in chunks of consecutive
 * sites (engine/arm.c), and a chunk whose armed sites changed is attached as
 * a new uprobe_multi link with the same cookies (cookie = site index, so
 * reports from a site armed earlier still symbolize) before its old link is
 * closed.  Closing a link waits for the uprobes' RCU grace periods, mostly
 * asleep; the set is only re-attached when it changed (docs/PERFORMANCE.md,
 * "Figures behind the code", has what a re-attach costs).
 *
 * Kernel mode (ksampler.c has why and the figures) keeps its kprobes
 * registered and flips bits of a BPF-side bitmap instead, so a disarmed
 * site still traps: every hit costs trap_ns, armed or not, which is the
 * floor, and a site's load is its BPF time alone.  Since a disarmed site's
 * hits are counted too, its rate is known every period: its overhead is
 * that rate times the BPF time a hit took while it was armed, so a cold
 * site that turns hot is seen while disarmed.  "Native" is the machine's
 * busy CPU time less kcsand's own, less the probes' (floor included).
 *
 * A warm-up (sampler_warmup_cpu_ms of the targets' CPU time) arms everything
 * first: short runs, such as the test scenarios, whose native run time is a
 * few milliseconds, would otherwise be over before any hot site had its
 * turn, and the soft watchpoints only see accesses that overlap.  CPU time
 * rather than wall time, so that a loaded machine, where the target gets
 * less of the CPU, does not cut the warm-up short.  In kernel mode it is
 * the machine's busy CPU time outside kcsand (the same clock as "native").
 * The warm-up stays short, as a long one costs more than the whole budget
 * on a program of a few seconds; per-site backoff (sampler.h) does the
 * rest: a site first hit after the warm-up, such as the
 * parallel phase after a long serial initialization, is armed until it has
 * taken sampler_backoff_hits hits, and a tick comes early (checked every
 * SAMPLER_BACKOFF_CHECK_MS) when it has, so that a hot site costs those
 * hits and a re-attach, not a whole period.
 *
 * The cold start's credit (user mode).  The warm-up and level 0 are outside
 * the budget, and on a program of a few seconds they were most of its
 * overhead: the hash table of bench/ at 2 s natively ran 1.9x, about 1 s of
 * it traps at level 0.  So they spend a credit: sampler_start_credit_ms of
 * probe CPU time at the start, earning budget times the targets' own time,
 * kept up to that start value.  When it runs out, the warm-up is over and
 * every level-0 site that was hit moves to level 1, where the budget
 * governs it; a site first hit later still starts at level 0 while credit
 * is left.  LiteRace's cold code sampled in full, at a bounded cost.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kcsand.h"
#include "ksampler.h"
#include "sampler.h"
#include "thread_turn.h"
#include "kcsand.skel.h"
#include "util/print.h"
#include "util/proc_stat.h"
#include "util/clock.h"
#include "util/array.h"

/*
 * Calls of a trap calibration (the least of clock.h's batches): a start
 * spends them before the target runs, 28-60 us each here.  500 was 20 ms
 * of a 0.46 s `kcsanctl run -- true`; batches of 20 still find a batch no
 * interrupt fell in.
 */
#define CALIB_CALLS	200
/*
 * Hot sites armed together in a hot turn.  A turn costs about the same with
 * one hot site as with several (any one keeps its threads in traps), but
 * the fewer are armed, the faster the unprobed code around them runs, and
 * the likelier a watcher sees another thread change its value
 * (docs/PERFORMANCE.md, "Figures behind the code").
 */
#define SAMPLER_HOT_PER_TURN	2
#define MAX_PIDS	256
/* How often a level-0 site's hits are checked between ticks: its cost until it backs off. */
#define SAMPLER_BACKOFF_CHECK_MS	10
/* Per period: how much of its past the check on the budget keeps (about 2 s at 100 ms). */
#define SAMPLER_FEEDBACK_DECAY	0.95
/* Kernel mode: how much of its past a site's BPF time per hit keeps, per armed period. */
#define SAMPLER_COST_DECAY	0.95

struct pid_cpu {
	int pid;
	uint64_t ticks;
};

/* What the sampler measured of one site (struct sampler's site[], by cookie). */
struct sampler_site {
	double load;			/* CPU-s/s it took in the last period */
	bool known;			/* x measured at least once */
	uint64_t prev_hits, prev_ns;	/* its counters at the last read */
	struct site_backoff bo;		/* its backoff level */
	/*
	 * Kernel mode: hits a ns (every hit, armed or not) in the last
	 * period, and decaying sums of the hits and the BPF time while
	 * armed, whose ratio is the BPF time a hit takes.
	 */
	double rate, on_hits, on_ns;
};

struct sampler {
	const struct sampler_ops *ops;
	void *ctx;			/* the engine, for ops */
	struct sampler_params p;	/* read at each tick */
	struct kcsand_bpf *skel;
	size_t capacity;
	int nr_cpus;
	const struct kcsand_site_stat *stats;	/* mmap of site_stats */
	size_t stats_len;

	size_t n;			/* sites known (cookies handed out) */
	size_t cap_sites;		/* room in the per-site arrays below */
	struct sampler_site *site;	/* per site: what the sampler measured of it */
	/*
	 * Per site too, but kept as arrays of their own: sampler__choose()
	 * (policy.c) takes x and ready as arrays, and the sets are what the
	 * engine, the kernel bitmap and the hot cycle take, a byte per cookie.
	 */
	double *x;			/* probe time per native time, when armed */
	bool *ready;			/* measured and past level 0 */
	uint8_t *armed;			/* the set attached now */
	uint8_t *next;
	uint8_t *hot;			/* hot in the last plan */
	uint8_t *turn;			/* the sites of the hot turn running, if any */
	uint8_t *eligible;		/* hot, and its level lets it take a turn */
	size_t nr_fresh;		/* armed sites at level 0: checked between ticks */
	uint64_t next_check_ns;

	bool kernel;
	struct kcpu kcpu;
	struct kbitmap *kb;
	double cum_floor, cum_all_native;	/* CPU-ns since start: the trap floor's share */

	struct pid_cpu pids[MAX_PIDS];
	size_t nr_pids;
	uint64_t start_ns, last_ns;
	uint64_t rng;
	bool all_armed;
	double cum_probe, cum_native;	/* CPU-ns since the warm-up */
	double other_ns;		/* ops->other_probes_ns at the last tick */
	double target_cpu_ns;		/* the targets' CPU time so far */
	double turn_cost;		/* share of the target's CPU a hot turn takes */
	double turn_probe, turn_cpu;	/* decaying sums over turns: probe and CPU ns */
	double fb_probe, fb_native;	/* decaying sums: budgeted probe ns, native ns */
	bool hot_turn;			/* the period now running is one */
	bool turn_xbp;			/* by execute breakpoints in one thread */
	uint64_t turn_start_ns, turn_end_ns;
	double hot_share;		/* share of the time hot turns may take */
	double credit_ns;		/* hot-turn time earned and not used yet */
	double cold_credit_ns;		/* what the cold start may still spend, CPU-ns */
	bool warm_over;			/* the warm-up ended early: its credit ran out */
	bool new_run;			/* sampler__new_run(): tick now */
	struct hot_cycle cycle;
	struct sampler_stats st;
};

int sampler__prepare(struct kcsand_bpf *skel, size_t capacity, bool use_bitmap)
{
	int ncpu = libbpf_num_possible_cpus();

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	skel->rodata->sampler_capacity = capacity;
	skel->rodata->sampler_use_bitmap = use_bitmap;
	bpf_map__set_max_entries(skel->maps.site_stats, (size_t)ncpu * capacity);
	bpf_map__set_max_entries(skel->maps.disarmed_bitmap, (capacity + 63) / 64);
	return 0;
}

/* The calibration target: a function of our own, probed for a moment. */
__attribute__((noinline, used)) void sampler_calib_target(void)
{
	asm volatile("" ::: "memory");
}

static int grow(struct sampler *s, size_t n)
{
	size_t old = s->n, cap;

	if (n <= old)
		return 0;
	/*
	 * The per-site arrays share one capacity: each is reserved from the
	 * same old one, so each gets the same new one (the first exactly n).
	 */
#define GROW(p)								\
	do {								\
		cap = s->cap_sites;					\
		if (ARRAY_RESERVE_MORE(p, cap, old, n - old, n))	\
			return -ENOMEM;					\
	} while (0)
	GROW(s->site);
	GROW(s->x);
	GROW(s->armed);
	GROW(s->next);
	GROW(s->hot);
	GROW(s->turn);
	GROW(s->ready);
	GROW(s->eligible);
#undef GROW
	s->cap_sites = cap;
	for (size_t i = old; i < n; i++) {
		s->site[i] = (struct sampler_site){
			.bo = (struct site_backoff){ .since_ns = s->last_ns },
		};
		s->x[i] = 0;
		s->hot[i] = s->turn[i] = 0;
		s->armed[i] = 1;	/* objects are attached whole */
		s->ready[i] = false;
		s->eligible[i] = 0;
	}
	s->n = n;
	return 0;
}

int sampler__new(const struct sampler_ops *ops, void *ctx, struct kcsand_bpf *skel,
		 size_t capacity, bool kernel, struct sampler **out)
{
	struct sampler *s = calloc(1, sizeof(*s));
	void *m;
	int err;

	if (!s)
		return -ENOMEM;
	s->ops = ops;
	s->ctx = ctx;
	s->skel = skel;
	s->capacity = capacity;
	s->nr_cpus = libbpf_num_possible_cpus();
	err = map_region__open(bpf_map__fd(skel->maps.site_stats),
			       (size_t)s->nr_cpus * capacity * sizeof(struct kcsand_site_stat),
			       PROT_READ, "site statistics", &s->stats_len, &m);
	if (err) {
		free(s);
		return err;
	}
	s->stats = m;
	s->kernel = kernel;
	if (kernel) {
		err = kbitmap__open(skel, capacity, &s->kb);
		if (err) {
			sampler__free(s);
			return err;
		}
		s->st.kernel = true;
		s->st.trap_ns = kcpu__trap_ns(skel);
		kcpu__delta_ns(&s->kcpu);	/* primes it */
	} else {
		s->st.trap_ns = ops->trap_ns(ctx, sampler_calib_target, CALIB_CALLS);
		/* Until the execute-breakpoint program is loaded and measured (sampler__set_xbp_trap_ns). */
		s->st.xbp_trap_ns = s->st.trap_ns;
	}
	ops->get_params(ctx, &s->p);
	s->rng = clock__now_ns() | 1;
	s->start_ns = s->last_ns = clock__now_ns();
	s->all_armed = true;
	s->nr_fresh = 1;	/* every site starts at level 0: check from the start */
	s->next_check_ns = s->start_ns;
	s->turn_cost = 1;
	s->cold_credit_ns = s->p.start_credit_ms * 1e6;
	*out = s;
	return 0;
}

/* CPU ticks the targets used since the last call: live pids from the targets map. */
static uint64_t target_ticks_delta(struct sampler *s)
{
	struct pid_cpu cur[MAX_PIDS] = { 0 };	/* zeroed: cppcheck cannot see nr bound the copy */
	size_t nr = 0;
	uint64_t delta = 0;
	__u32 key, next, *prev = NULL;
	int fd = bpf_map__fd(s->skel->maps.targets);

	while (nr < MAX_PIDS && !bpf_map_get_next_key(fd, prev, &next)) {
		struct proc_stat st;

		key = next;
		prev = &key;
		if (proc_stat__read(key, 0, &st))
			continue;
		cur[nr].pid = key;
		cur[nr].ticks = st.utime + st.stime;
		for (size_t i = 0; i < s->nr_pids; i++) {
			if (s->pids[i].pid == (int)key) {
				delta += cur[nr].ticks - s->pids[i].ticks;
				goto next;
			}
		}
		delta += cur[nr].ticks;	/* new since the last period */
next:
		nr++;
	}
	memcpy(s->pids, cur, nr * sizeof(cur[0]));
	s->nr_pids = nr;
	return delta;
}

static bool sets_differ(const uint8_t *a, const uint8_t *b, size_t n)
{
	return memcmp(a, b, n) != 0;
}

/* CPU-ns the measured side ran for since the last tick: the targets, or the machine. */
static double cpu_delta_ns(struct sampler *s)
{
	long hz = sysconf(_SC_CLK_TCK);
	double ns;

	if (s->kernel) {
		ns = kcpu__delta_ns(&s->kcpu);
		return ns > 0 ? ns : 0;
	}
	return hz > 0 ? (double)target_ticks_delta(s) / hz * 1e9 : 0;
}

/*
 * Arm the armed[] set, plus the turn[] sites (NULL: no turn).  Kernel mode
 * flips bits; user mode attaches (see engine__rearm and engine__turn):
 * returns what engine__turn returns, 1 for a turn on one thread.
 */
static int arm_set(struct sampler *s, const uint8_t *armed, const uint8_t *turn, bool rearm)
{
	if (s->kernel) {
		kbitmap__write(s->kb, armed, turn, s->n);
		return 0;
	}
	return rearm ? s->ops->rearm(s->ctx, armed) : s->ops->turn(s->ctx, armed, turn);
}

static uint64_t next_tick_ns(const struct sampler *s)
{
	if (s->hot_turn)
		return s->turn_end_ns;
	return s->last_ns + (uint64_t)s->p.period_ms * 1000000;
}

/* The next tick, or the next check of the level-0 sites if that comes first. */
static uint64_t next_wakeup_ns(const struct sampler *s)
{
	uint64_t at = next_tick_ns(s);

	return s->nr_fresh && s->next_check_ns < at ? s->next_check_ns : at;
}

int sampler__timeout_ms(const struct sampler *s)
{
	uint64_t now = clock__now_ns(), at = next_wakeup_ns(s);

	if (at <= now)
		return 0;
	return (at - now + 999999) / 1000000 > INT_MAX ? INT_MAX : (at - now + 999999) / 1000000;
}

/*
 * Per-site backoff is user mode's.  Kernel mode sees every site's hits
 * while it is disarmed, so a site that turns hot is measured without
 * arming it, and its guest suites (tests/vm/kernel-sampler.sh) check the
 * plan they were written for: the levels are counted there, not used.
 */
static bool backs_off(const struct sampler *s)
{
	return !s->kernel;
}

/* Hits of site i and their BPF ns (*ns), all CPUs, since the BPF object was loaded. */
static uint64_t site_counts(const struct sampler *s, size_t i, uint64_t *ns)
{
	uint64_t hits = 0, t = 0;

	for (int c = 0; c < s->nr_cpus; c++) {
		const struct kcsand_site_stat *st = &s->stats[(size_t)c * s->capacity + i];

		hits += *(volatile const __u64 *)&st->hits;
		t += *(volatile const __u64 *)&st->ns;
	}
	*ns = t;
	return hits;
}

/* Is the cold start's cost bounded (user mode, a start credit given)? */
static bool cold_bounded(const struct sampler *s)
{
	return backs_off(s) && s->p.start_credit_ms && s->p.budget < 100;
}

/*
 * Between ticks: has an armed level-0 site taken its backoff_hits?  Then
 * the tick comes now, so that a hot site stops trapping at once rather
 * than at the end of the period.
 */
static bool backoff_due(struct sampler *s, uint64_t now)
{
	double cold = 0;

	if (!backs_off(s) || !s->nr_fresh || now < s->next_check_ns)
		return false;
	s->next_check_ns = now + SAMPLER_BACKOFF_CHECK_MS * 1000000ull;
	if (grow(s, s->ops->nr_sites(s->ctx)))
		return false;
	for (size_t i = 0; i < s->n && i < s->capacity; i++) {
		uint64_t hits, ns;

		if (s->site[i].bo.level || !(s->armed[i] || s->turn[i]))
			continue;
		hits = site_counts(s, i, &ns) - s->site[i].prev_hits;
		cold += hits * s->st.trap_ns + (double)(ns - s->site[i].prev_ns);
		if (s->site[i].bo.hits + hits >= s->p.backoff_hits ||
		    site_backoff__level0_over(&s->site[i].bo,
					      (uint64_t)s->p.level0_cpu_ms * 1000000,
					      (uint64_t)s->target_cpu_ns)) {
			s->st.backoffs++;
			return true;
		}
	}
	/* The cold start spent its credit: the tick that demotes its sites comes now. */
	if (cold_bounded(s) && cold > s->cold_credit_ns) {
		s->st.backoffs++;
		return true;
	}
	return false;
}

/* End the running hot turn: its sites' int3s go at once, the close then waits for RCU. */
static void end_turn(struct sampler *s, uint64_t now)
{
	if (!s->hot_turn)
		return;
	arm_set(s, s->armed, NULL, false);
	/* Charge what the turn took, attach included: a late tick costs the next turn. */
	s->credit_ns -= (double)(now - s->turn_start_ns);
	for (size_t i = 0; i < s->n; i++)
		if (s->turn[i])
			s->site[i].bo.turn_ns += (double)(now - s->turn_start_ns);
	s->hot_turn = false;
}

/* Start a hot turn if there is credit for one; s->turn holds its sites. */
static void start_turn(struct sampler *s, size_t n, unsigned int turn_ms, uint64_t now)
{
	uint64_t t0;
	int r;

	memset(s->turn, 0, n);
	if (s->credit_ns < turn_ms * 1e6)
		return;
	/* Never a site of the armed set: it would be attached twice. */
	memcpy(s->turn, s->armed, n);
	/* Only the hot sites whose level has time left for a turn. */
	for (size_t i = 0; i < n; i++)
		s->eligible[i] = s->hot[i] &&
				 (!backs_off(s) || site_backoff__may_turn(&s->site[i].bo, now));
	if (!hot_cycle__next(&s->cycle, s->eligible, n, SAMPLER_HOT_PER_TURN, &s->rng, s->turn)) {
		memset(s->turn, 0, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		s->turn[i] &= !s->armed[i];
	t0 = clock__now_ns();
	r = arm_set(s, s->armed, s->turn, false);
	if (r < 0) {
		arm_set(s, s->armed, NULL, false);
		memset(s->turn, 0, n);
		return;
	}
	s->turn_xbp = r == 1;
	s->st.xbp_turns += s->turn_xbp;
	s->hot_turn = true;
	s->turn_start_ns = t0;
	s->turn_end_ns = clock__now_ns() + (uint64_t)turn_ms * 1000000;
	s->st.turns++;
}

/*
 * Read site i's counters for the period of dt ns that ends now: its load
 * (CPU-ns a ns that arming it cost) and, in kernel mode, its hit rate; the
 * trap time of its hits goes to *floor when arming does not control it.
 */
static void measure_site(struct sampler *s, size_t i, uint64_t dt, uint64_t now, double *floor)
{
	uint64_t ns, hits = site_counts(s, i, &ns), dh;
	double dns;
	bool on = s->armed[i] || s->turn[i];

	dh = hits - s->site[i].prev_hits;
	dns = (double)(ns - s->site[i].prev_ns);
	/* Only hits taken armed count towards backing off: they are what was sampled. */
	if (on && dh)
		site_backoff__hit(&s->site[i].bo, dh, s->p.backoff_hits,
				  (uint64_t)s->p.level0_cpu_ms * 1000000, now,
				  (uint64_t)s->target_cpu_ns);
	s->site[i].prev_hits = hits;
	s->site[i].prev_ns = ns;
	s->site[i].load = 0;
	if (s->kernel) {
		/* Armed or not, every hit trapped: that is the floor. */
		*floor += dh * s->st.trap_ns / dt;
		s->site[i].rate = (double)dh / dt;
		if (on) {
			s->site[i].load = dns / dt;
			s->site[i].on_hits = s->site[i].on_hits * SAMPLER_COST_DECAY + dh;
			s->site[i].on_ns = s->site[i].on_ns * SAMPLER_COST_DECAY + dns;
		} else {
			s->st.unarmed_hits += dh;
		}
	} else if (on || dh) {
		/*
		 * BPF counts only the hits of an attached site, each a trap.  A
		 * site disarmed at this tick was attached while the re-attach
		 * that disarmed it ran, which takes seconds for a large set (a
		 * grace period per uprobe): stress-ng's hot sites took millions
		 * of hits then, which, not charged, read as the program's own
		 * time (an estimate of 33% for a run 181 times as long).
		 */
		double trap = s->turn[i] && s->turn_xbp ? s->st.xbp_trap_ns : s->st.trap_ns;

		s->site[i].load = (dh * trap + dns) / dt;
	}
}

/*
 * Site i's overhead x (its probe time per unit of native time) for this
 * period; false when there is nothing new to learn about it.  User mode
 * measures a site while it is armed.  Kernel mode sees every site's hits:
 * its rate times the BPF time a hit took while armed.
 */
static bool site_overhead(const struct sampler *s, size_t i, double native, double *x)
{
	bool on = s->armed[i] || s->turn[i];

	if (!s->kernel) {
		*x = s->site[i].load / native;
		return on;
	}
	if (s->site[i].on_hits > 0) {
		*x = s->site[i].rate * (s->site[i].on_ns / s->site[i].on_hits) / native;
		return true;
	}
	/* Never hit while armed: nothing to learn unless it is armed and still not hit. */
	*x = 0;
	return s->site[i].rate == 0 && (on || s->site[i].known);
}

/* What one period measured, for the steps of a tick. */
struct period {
	uint64_t dt;		/* ns since the last tick */
	double u;		/* CPU-s/s the measured side used, probes included */
	double probe;		/* CPU-s/s the armed sites took */
	double floor;		/* kernel mode: CPU-s/s of traps of disarmed sites */
	double other;		/* CPU-s/s of the engine's other probes (sync probes) */
	double budgeted;	/* CPU-s/s of the sites past level 0, which the budget governs */
	double native;		/* the program's own CPU-s/s */
	double nat;		/* the same, at least one clock tick's worth */
	bool was_turn;
};

/*
 * CPU-s/s the measured side used in a period of dt ns whose clock ticks
 * read cpu ns, its probes having taken probes CPU-s/s by their own count.
 * The ticks of /proc read up to two short per process and period (utime
 * and stime): the probes' count is the better figure when it is larger,
 * but by no more than that.  It is time in BPF by the clock, and a stall
 * spins: a stalled thread that is preempted goes on counting while
 * another runs, so on a busy machine it passes the CPU the targets got
 * (taken whole, redis's cpu_ms read 3,209,034 ms after 11 minutes on 2 CPUs).
 */
static double measured_use(const struct sampler *s, double cpu, double probes, uint64_t dt)
{
	long hz = sysconf(_SC_CLK_TCK);
	long procs = s->kernel ? sysconf(_SC_NPROCESSORS_ONLN) : (long)s->nr_pids;
	double u = cpu / dt, slack = hz > 0 ? 2.0 * (procs > 0 ? procs : 1) * 1e9 / hz / dt : 0;

	if (u < probes)
		u = probes < u + slack ? probes : u + slack;
	return u;
}

/* Read every site's counters and the CPU time: what the period that ends now cost. */
static void measure_period(struct sampler *s, uint64_t now, struct period *pd)
{
	long hz = sysconf(_SC_CLK_TCK);
	double cpu, floor_native, spare;

	pd->dt = now - s->last_ns;
	s->last_ns = now;
	cpu = cpu_delta_ns(s);
	pd->probe = pd->floor = 0;
	pd->budgeted = 0;
	for (size_t i = 0; i < s->n && i < s->capacity; i++) {
		uint8_t level = s->site[i].bo.level;	/* before this period's hits move it */

		measure_site(s, i, pd->dt, now, &pd->floor);
		pd->probe += s->site[i].load;
		if (level || !backs_off(s))
			pd->budgeted += s->site[i].load;
	}
	s->target_cpu_ns += cpu;
	pd->other = 0;
	if (s->ops->other_probes_ns) {
		double o = s->ops->other_probes_ns(s->ctx);

		pd->other = o > s->other_ns ? (o - s->other_ns) / pd->dt : 0;
		s->other_ns = o;
	}
	pd->u = measured_use(s, cpu, pd->probe + pd->other, pd->dt);
	spare = pd->u - pd->probe - pd->other;
	/*
	 * The floor is an estimate: trap_ns is an int3 trap's cost, and a
	 * kprobe the kernel has since optimized into a jump costs less, and
	 * it can come to more CPUs than the machine has.  What the machine
	 * measurably spent beyond the BPF time bounds it.
	 */
	if (pd->floor > spare)
		pd->floor = spare > 0 ? spare : 0;
	pd->native = spare - pd->floor > 0 ? spare - pd->floor : 0;
	s->st.native_ns += pd->native * pd->dt;
	s->st.cpu_ns += pd->u * pd->dt;
	/* One clock tick is the resolution of /proc/PID/stat and /proc/stat: less is noise. */
	floor_native = hz > 0 ? 1e9 / hz / pd->dt : 0.02;
	pd->nat = pd->native > floor_native ? pd->native : floor_native;
}

/*
 * A site's overhead x = its probe time per unit of the program's own work
 * does not depend on which other sites are armed.  When probes take nearly
 * all the time, the program's own time is below the tick resolution and x
 * comes out low, but far above the hot threshold, which is all the policy
 * needs.  Take a rise at once, a fall halfway: a site found hotter than
 * thought must not stay cold.
 */
static void learn_overheads(struct sampler *s, const struct period *pd)
{
	for (size_t i = 0; i < s->n && i < s->capacity; i++) {
		double x;

		if (!site_overhead(s, i, pd->nat, &x))
			continue;
		s->x[i] = s->site[i].known && x < s->x[i] ? (s->x[i] + x) / 2 : x;
		s->site[i].known = true;
	}
	s->st.measured_overhead = pd->probe / pd->nat;
	s->cum_floor += pd->floor * pd->dt;
	s->cum_all_native += pd->nat * pd->dt;
	s->st.floor_overhead = s->cum_floor / s->cum_all_native;
	s->st.periods++;
	/*
	 * What a hot turn costs, as a share of the target's CPU time.  A turn
	 * is a few clock ticks long, the resolution of the CPU time it is
	 * measured against, so one turn's CPU time is off by a tick either
	 * way (a 20 ms turn measured 7 CPUs busy on a 2-CPU machine): the
	 * ratio of sums over many turns, not an average of ratios, which the
	 * high ones (clipped at 1) and the low ones bias downwards.
	 */
	/*
	 * The check on the plan (pace_turns): the last few seconds.  Where the
	 * cold start spends a credit, its cost counts too: the credit is an
	 * advance on the budget, which turns then pay back, so that a short
	 * run costs the larger of the two, not their sum.  Unbounded, level 0
	 * is outside the budget and left out.
	 */
	s->fb_probe = s->fb_probe * SAMPLER_FEEDBACK_DECAY +
		      (cold_bounded(s) ? pd->probe : pd->budgeted) * pd->dt;
	s->fb_native = s->fb_native * SAMPLER_FEEDBACK_DECAY + pd->native * pd->dt;
	if (pd->was_turn && pd->u > 0) {
		s->turn_probe = s->turn_probe * 7 / 8 + pd->probe * pd->dt;
		s->turn_cpu = s->turn_cpu * 7 / 8 + pd->u * pd->dt;
		s->turn_cost = s->turn_probe < s->turn_cpu ? s->turn_probe / s->turn_cpu : 1;
	}
}

static bool sampling(const struct sampler *s)
{
	return s->p.budget < 100 &&
	       (s->warm_over || s->target_cpu_ns >= (double)s->p.warmup_cpu_ms * 1e6);
}

/*
 * Charge the period's cold start (every site during the warm-up, the
 * level-0 sites after it) to its credit, earned at budget times the
 * program's own time; when it runs out, end the warm-up and move the
 * level-0 sites that were hit to level 1 (the top comment has why).
 */
static void charge_cold(struct sampler *s, const struct period *pd, uint64_t now)
{
	double cold = (sampling(s) ? pd->probe - pd->budgeted : pd->probe) * pd->dt;

	s->st.cold_ms += cold / 1e6;
	if (!cold_bounded(s) ||
	    !cold_credit__charge(&s->cold_credit_ns, s->p.start_credit_ms * 1e6,
				 s->p.budget / 100.0, pd->native * pd->dt, cold))
		return;
	s->warm_over = true;
	s->st.cold_outs++;
	for (size_t i = 0; i < s->n && i < s->capacity; i++)
		if (!s->site[i].bo.level && s->site[i].bo.hits)
			site_backoff__demote(&s->site[i].bo, now);
}

/*
 * The armed set for the next period, into s->next: every site during the
 * warm-up or at a budget of 100%; else the level-0 sites, which have not
 * used their hits yet, and the cold sites that fit the budget.
 */
static void plan(struct sampler *s, const struct period *pd)
{
	size_t n = s->n, armed = 0;
	double est;

	memset(s->turn, 0, n);
	if (!sampling(s)) {
		memset(s->next, 1, n);
		est = pd->probe / pd->nat;
	} else {
		s->cum_probe += pd->probe * pd->dt;
		s->cum_native += pd->native * pd->dt;
		/* Kernel mode keeps its plan as it was (backs_off()). */
		for (size_t i = 0; i < n; i++)
			s->ready[i] = s->site[i].known &&
				      (!backs_off(s) || s->site[i].bo.level > 0);
		memset(s->next, 0, n);
		est = sampler__choose(s->x, s->ready, n, s->p.budget / 100.0, s->turn_cost, s->next,
				      s->hot, &s->hot_share);
	}
	if (s->cum_native > 0)
		s->st.sampled_overhead = s->cum_probe / s->cum_native;
	memset(s->st.levels, 0, sizeof(s->st.levels));
	s->nr_fresh = 0;
	for (size_t i = 0; i < n; i++) {
		armed += s->next[i];
		s->st.levels[s->site[i].bo.level]++;
		s->nr_fresh += s->next[i] && !s->site[i].bo.level;
	}
	s->st.armed = armed;
	s->st.total = n;
	s->st.est_overhead = est;
}

/* Re-attach when the armed set changed. */
static void apply_plan(struct sampler *s)
{
	uint64_t t0 = clock__now_ns();

	if (!sets_differ(s->armed, s->next, s->n))
		return;
	if (!arm_set(s, s->next, NULL, true)) {
		memcpy(s->armed, s->next, s->n);
		s->st.rearms++;
		s->st.rearm_ms = (clock__now_ns() - t0) / 1e6;
	}
}

/*
 * Hot turns are paced, not drawn: time earns credit at hot_share, and a
 * turn of turn_ms starts once there is credit for it, its sites on a link
 * of their own (engine__turn), so that starting and ending it costs an
 * attach of two sites rather than a re-attach of the armed set.  Short
 * turns, many of them: the budget buys the same time armed, spread over
 * more turns, so a hot site waits less for its turn.  At most two turns of
 * credit are kept: a budget raised live does not bring a burst of turns.
 */
static void pace_turns(struct sampler *s, uint64_t dt, uint64_t now)
{
	unsigned int turn_ms = s->p.turn_ms;

	if (!sampling(s))
		return;
	/*
	 * The policy's share comes from what turns were measured to cost; the
	 * overhead the budget governs, measured over the last few seconds, is
	 * the check on it: while that is over the budget, turns earn nothing.
	 * Level 0 is outside the budget and left out.  User mode's: kernel
	 * mode's turns flip bits, at a cost its model measures directly.
	 */
	if (backs_off(s) && s->fb_native > 0 &&
	    s->fb_probe > s->fb_native * s->p.budget / 100.0)
		return;
	s->credit_ns += s->hot_share * dt;
	if (s->credit_ns > turn_ms * 2e6)
		s->credit_ns = turn_ms * 2e6;
	start_turn(s, s->n, turn_ms, now);
}

static void log_tick(const struct sampler *s, const struct period *pd)
{
	const struct sampler_stats *st = &s->st;

	pr_debug("sampler: %zu/%zu sites armed%s, %s %.2f CPUs, probes %.2f, "
		 "overhead %.0f%% this period, %.0f%% since warm-up, %.0f%% expected, "
		 "%s %.1f%s, levels %zu/%zu/%zu/%zu, turns: cost %.2f share %.3f\n",
		st->armed, st->total, s->hot_turn ? " + a hot turn" : "",
		s->kernel ? "machine" : "target", pd->u, pd->probe, st->measured_overhead * 100,
		st->sampled_overhead * 100, st->est_overhead * 100,
		s->kernel ? "trap floor" : "re-attach",
		s->kernel ? pd->floor / pd->nat * 100 : st->rearm_ms, s->kernel ? "%" : " ms",
		st->levels[0], st->levels[1], st->levels[2], st->levels[3], s->turn_cost,
		s->hot_share);
}

void sampler__tick(struct sampler *s)
{
	uint64_t now = clock__now_ns();
	struct period pd = { .was_turn = s->hot_turn };

	s->ops->get_params(s->ctx, &s->p);
	if (now < next_tick_ns(s) && !backoff_due(s, now) && !s->new_run)
		return;
	s->new_run = false;
	end_turn(s, now);
	if (grow(s, s->ops->nr_sites(s->ctx)))
		return;
	measure_period(s, now, &pd);
	charge_cold(s, &pd, now);
	learn_overheads(s, &pd);
	plan(s, &pd);
	apply_plan(s);
	pace_turns(s, pd.dt, now);
	log_tick(s, &pd);
}

/*
 * A new process of the targets (a service target's next run): the code
 * is cold again for it.  Without this, a target's later runs found every
 * site its first run backed off, and the racy pair of a short run was not
 * armed.  User mode only: a kernel has no runs.
 */
void sampler__new_run(struct sampler *s)
{
	uint64_t now = clock__now_ns();

	if (s->kernel)
		return;
	for (size_t i = 0; i < s->n && i < s->capacity; i++)
		s->site[i].bo = (struct site_backoff){ .since_ns = now };
	s->cold_credit_ns = s->p.start_credit_ms * 1e6;
	s->nr_fresh = 1;
	s->next_check_ns = now;
	s->new_run = true;
}

void sampler__set_xbp_trap_ns(struct sampler *s, double ns)
{
	if (s && ns > 0)
		s->st.xbp_trap_ns = ns;
}

void sampler__get_stats(const struct sampler *s, struct sampler_stats *out)
{
	*out = s->st;
	if (!s->st.total) {
		out->total = s->n;
		out->armed = s->n;
	}
}

#define FIG_NAME(ID, name, kernel_only) [SAMPLER_FIG_##ID] = #name,
static const char *const figure_names[] = {
	SAMPLER_FIGURES(FIG_NAME)
};
#undef FIG_NAME
#define FIG_KERNEL(ID, name, kernel_only) [SAMPLER_FIG_##ID] = kernel_only,
static const bool figure_kernel_only[] = {
	SAMPLER_FIGURES(FIG_KERNEL)
};
#undef FIG_KERNEL

_Static_assert(sizeof(figure_names) / sizeof(figure_names[0]) == SAMPLER_FIG_COUNT,
	       "a name for every figure");

const char *sampler_figure__name(enum sampler_figure f)
{
	return (unsigned int)f < SAMPLER_FIG_COUNT ? figure_names[f] : "?";
}

bool sampler_figure__shown(enum sampler_figure f, const struct sampler_stats *st)
{
	return (unsigned int)f < SAMPLER_FIG_COUNT && (st->kernel || !figure_kernel_only[f]);
}

/* A fraction as a whole percentage; an overhead with no native time to divide by is 100%. */
static uint64_t whole_pct(double x)
{
	return isfinite(x) ? (uint64_t)(x * 100 + 0.5) : 100;
}

void sampler_stats__figures(const struct sampler_stats *st, uint64_t out[SAMPLER_FIG_COUNT])
{
	out[SAMPLER_FIG_ARMED] = st->armed;
	out[SAMPLER_FIG_TOTAL] = st->total;
	out[SAMPLER_FIG_TURNS] = st->turns;
	out[SAMPLER_FIG_OVERHEAD] = whole_pct(st->est_overhead);
	out[SAMPLER_FIG_FLOOR] = whole_pct(st->floor_overhead);
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	kbitmap__free(s->kb);
	if (s->stats)
		munmap((void *)s->stats, s->stats_len);
	free(s->site);
	free(s->x);
	free(s->armed);
	free(s->next);
	free(s->hot);
	free(s->turn);
	hot_cycle__free(&s->cycle);
	free(s->ready);
	free(s->eligible);
	free(s);
}

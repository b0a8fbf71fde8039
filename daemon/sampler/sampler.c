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
 * trap is the cost; the armed subset is attached as a new uprobe_multi link
 * with the same cookies (cookie = site index, so reports from a site armed
 * earlier still symbolize) before the old link is closed.  Measured on the
 * development VM (Linux 6.18, 2 vCPUs shared, bench/reattach with a process
 * mapping the file; median of 5): a new link plus closing the old one takes
 * 28 ms for 100 sites, 32 ms for 1,000, 51 ms for 10,000 (first attach of
 * 10,000: 77 ms).  The fixed part is closing the old link, which waits for
 * the uprobes' RCU grace periods, mostly asleep.  A period of 500 ms keeps
 * that below 10% of the daemon's time at 10,000 sites and reacts within a
 * second; the set is only re-attached when it changed.
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
 * turn.  CPU time rather than wall time, so that a loaded machine, where the
 * target gets less of the CPU, does not cut the warm-up short.  In kernel
 * mode it is the machine's busy CPU time outside kcsand (the same clock as
 * "native"), and its default is kernel mode's in params.c.
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
#include "engine/engine.h"
#include "ksampler.h"
#include "sampler.h"
#include "engine/uprobe_multi.h"
#include "xturn.h"
#include "kcsand.skel.h"
#include "util/print.h"

extern int kcsand_verbose;

#define CALIB_CALLS	500
/*
 * Hot sites armed together in a hot turn.  A turn costs about the same with
 * one hot site as with several (any one keeps its threads in traps), but
 * the fewer are armed, the faster the unprobed code around them runs, and
 * the likelier a watcher sees another thread change its value: on
 * bench/hashtable, turns of 8 sites found no race in 30 s where turns of 2
 * found it in both runs tried.
 */
#define SAMPLER_HOT_PER_TURN	2
#define MAX_PIDS	256
/* Kernel mode: how much of its past a site's BPF time per hit keeps, per armed period. */
#define SAMPLER_COST_DECAY	0.95

struct pid_cpu {
	int pid;
	uint64_t ticks;
};

struct sampler {
	struct engine *e;
	struct kcsand_bpf *skel;
	size_t capacity;
	int nr_cpus;
	const struct kcsand_site_stat *stats;	/* mmap of site_stats */
	size_t stats_len;

	size_t n;			/* sites known (cookies handed out) */
	double *x;			/* per site: probe time per native time, when armed */
	double *load;			/* per site: CPU-s/s it took in the last period */
	bool *known;
	uint8_t *armed;			/* the set attached now */
	uint8_t *next;
	uint8_t *hot;			/* per site: hot in the last plan */
	uint8_t *turn;			/* the sites of the hot turn running, if any */
	uint64_t *prev_hits, *prev_ns;

	/*
	 * Kernel mode: per site, hits a ns (every hit, armed or not) in the
	 * last period, and decaying sums of the hits and the BPF time while
	 * armed, whose ratio is the BPF time a hit takes.
	 */
	bool kernel;
	double *rate, *on_hits, *on_ns;
	struct kcpu kcpu;
	struct kbitmap *kb;
	double cum_floor, cum_all_native;	/* CPU-ns since start: the trap floor's share */

	struct pid_cpu pids[MAX_PIDS];
	size_t nr_pids;
	uint64_t start_ns, last_ns;
	uint64_t rng;
	bool all_armed;
	double cum_probe, cum_native;	/* CPU-ns since the warm-up */
	double target_cpu_ns;		/* the targets' CPU time so far */
	double turn_cost;		/* share of the target's CPU a hot turn takes */
	bool hot_turn;			/* the period now running is one */
	bool turn_xbp;			/* by execute breakpoints in one thread */
	uint64_t turn_start_ns, turn_end_ns;
	double hot_share;		/* share of the time hot turns may take */
	double credit_ns;		/* hot-turn time earned and not used yet */
	struct hot_cycle cycle;
	struct sampler_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

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

/* File offset of a function of this program, from /proc/self/maps. */
static int self_file_offset(const void *fn, char *path, size_t len, __u64 *off)
{
	uint64_t a = (uint64_t)(uintptr_t)fn, lo, hi, pgoff;
	char line[4352], perms[8], file[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		file[0] = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4095s", &lo, &hi,
			   perms, &pgoff, file) < 4)
			continue;
		if (a >= lo && a < hi && file[0] == '/') {
			snprintf(path, len, "%s", file);
			*off = a - lo + pgoff;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/*
 * The cost of one trap: time calls of a probed function of our own against
 * unprobed ones.  Our own process is not a target, so the program returns
 * at its first test: this is the trap, the part the BPF side cannot time.
 */
static double calibrate_trap_ns(struct kcsand_bpf *skel, bool multi)
{
	__u64 off, cookie = ~0u;
	struct bpf_link *link = NULL;
	uint64_t t0, t1, t2, t3;
	char path[4096];
	int fd = -1;

	if (self_file_offset((const void *)sampler_calib_target, path, sizeof(path), &off))
		return 0;
	if (multi) {
		fd = uprobe_multi_attach(bpf_program__fd(skel->progs.kcsand_uprobe_multi), path,
					 &off, &cookie, 1, getpid());
	} else {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie);

		link = bpf_program__attach_uprobe_opts(skel->progs.kcsand_uprobe, getpid(), path,
						       off, &uo);
	}
	if (fd < 0 && !link)
		return 0;
	t0 = now_ns();
	for (int i = 0; i < CALIB_CALLS; i++)
		sampler_calib_target();
	t1 = now_ns();
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	t2 = now_ns();
	for (int i = 0; i < CALIB_CALLS; i++)
		sampler_calib_target();
	t3 = now_ns();
	return ((double)(t1 - t0) - (double)(t3 - t2)) / CALIB_CALLS;
}

static int grow(struct sampler *s, size_t n)
{
	size_t old = s->n;

	if (n <= old)
		return 0;
#define GROW(p)                                          \
	do {                                             \
		void *q = realloc(p, n * sizeof(*(p)));  \
		if (!q)                                  \
			return -ENOMEM;                  \
		p = q;                                   \
	} while (0)
	GROW(s->x);
	GROW(s->load);
	GROW(s->known);
	GROW(s->armed);
	GROW(s->next);
	GROW(s->hot);
	GROW(s->turn);
	GROW(s->prev_hits);
	GROW(s->prev_ns);
	GROW(s->rate);
	GROW(s->on_hits);
	GROW(s->on_ns);
#undef GROW
	for (size_t i = old; i < n; i++) {
		s->x[i] = s->load[i] = 0;
		s->rate[i] = s->on_hits[i] = s->on_ns[i] = 0;
		s->known[i] = false;
		s->hot[i] = s->turn[i] = 0;
		s->armed[i] = 1;	/* objects are attached whole */
		s->prev_hits[i] = s->prev_ns[i] = 0;
	}
	s->n = n;
	return 0;
}

int sampler__new(struct engine *e, struct kcsand_bpf *skel, size_t capacity, bool multi,
		 bool kernel, struct sampler **out)
{
	struct sampler *s = calloc(1, sizeof(*s));
	size_t page = sysconf(_SC_PAGESIZE);
	void *m;

	if (!s)
		return -ENOMEM;
	s->e = e;
	s->skel = skel;
	s->capacity = capacity;
	s->nr_cpus = libbpf_num_possible_cpus();
	s->stats_len = (size_t)s->nr_cpus * capacity * sizeof(struct kcsand_site_stat);
	s->stats_len = (s->stats_len + page - 1) & ~(page - 1);
	m = mmap(NULL, s->stats_len, PROT_READ, MAP_SHARED, bpf_map__fd(skel->maps.site_stats), 0);
	if (m == MAP_FAILED) {
		int err = -errno;

		pr_warn("sampler: cannot map the site statistics: %s\n",
			strerror(-err));
		free(s);
		return err;
	}
	s->stats = m;
	s->kernel = kernel;
	if (kernel) {
		int err = kbitmap__open(skel, capacity, &s->kb);

		if (err) {
			sampler__free(s);
			return err;
		}
		s->st.kernel = true;
		s->st.trap_ns = ktrap_ns(skel);
		kcpu__delta_ns(&s->kcpu);	/* primes it */
	} else {
		s->st.trap_ns = calibrate_trap_ns(skel, multi);
		s->st.xbp_trap_ns = xturn_trap_ns(skel, sampler_calib_target, CALIB_CALLS);
		if (s->st.xbp_trap_ns <= 0)
			s->st.xbp_trap_ns = s->st.trap_ns;
	}
	s->rng = now_ns() | 1;
	s->start_ns = s->last_ns = now_ns();
	s->all_armed = true;
	s->turn_cost = 1;
	*out = s;
	return 0;
}

/* CPU ticks the targets used since the last call: live pids from the targets map. */
static uint64_t target_ticks_delta(struct sampler *s)
{
	struct pid_cpu cur[MAX_PIDS];
	size_t nr = 0;
	uint64_t delta = 0;
	__u32 key, next, *prev = NULL;
	int fd = bpf_map__fd(s->skel->maps.targets);

	while (nr < MAX_PIDS && !bpf_map_get_next_key(fd, prev, &next)) {
		char path[64], buf[1024], *p;
		unsigned long ut, st;
		FILE *f;

		key = next;
		prev = &key;
		snprintf(path, sizeof(path), "/proc/%u/stat", key);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		/*
		 * After "comm)": state ppid pgrp session tty tpgid flags minflt
		 * cminflt majflt cmajflt utime stime
		 */
		if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
				 &st) != 2)
			continue;
		cur[nr].pid = key;
		cur[nr].ticks = ut + st;
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
	return rearm ? engine__rearm(s->e, armed) : engine__turn(s->e, armed, turn);
}

static uint64_t next_tick_ns(const struct sampler *s)
{
	unsigned int period = 0;	/* engine__get_param() knows every name of params.c */

	if (s->hot_turn)
		return s->turn_end_ns;
	engine__get_param(s->e, "sampler_period_ms", &period);
	return s->last_ns + (uint64_t)period * 1000000;
}

int sampler__timeout_ms(const struct sampler *s)
{
	uint64_t now = now_ns(), at = next_tick_ns(s);

	if (at <= now)
		return 0;
	return (at - now + 999999) / 1000000 > INT_MAX ? INT_MAX : (at - now + 999999) / 1000000;
}

/* End the running hot turn: its sites' int3s go at once, the close then waits for RCU. */
static void end_turn(struct sampler *s, uint64_t now)
{
	if (!s->hot_turn)
		return;
	arm_set(s, s->armed, NULL, false);
	/* Charge what the turn took, attach included: a late tick costs the next turn. */
	s->credit_ns -= (double)(now - s->turn_start_ns);
	s->hot_turn = false;
}

/* Start a hot turn if there is credit for one; s->turn holds its sites. */
static void start_turn(struct sampler *s, size_t n, unsigned int turn_ms)
{
	uint64_t t0;
	int r;

	memset(s->turn, 0, n);
	if (s->credit_ns < turn_ms * 1e6)
		return;
	/* Never a site of the armed set: it would be attached twice. */
	memcpy(s->turn, s->armed, n);
	if (!hot_cycle_next(&s->cycle, s->hot, n, SAMPLER_HOT_PER_TURN, &s->rng, s->turn)) {
		memset(s->turn, 0, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		s->turn[i] &= !s->armed[i];
	t0 = now_ns();
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
	s->turn_end_ns = now_ns() + (uint64_t)turn_ms * 1000000;
	s->st.turns++;
}

/*
 * Read site i's counters for the period of dt ns that ends now: its load
 * (CPU-ns a ns that arming it cost) and, in kernel mode, its hit rate; the
 * trap time of its hits goes to *floor when arming does not control it.
 */
static void measure_site(struct sampler *s, size_t i, uint64_t dt, double *floor)
{
	uint64_t hits = 0, ns = 0, dh;
	double dns;
	bool on = s->armed[i] || s->turn[i];

	for (int c = 0; c < s->nr_cpus; c++) {
		const struct kcsand_site_stat *st = &s->stats[(size_t)c * s->capacity + i];

		hits += *(volatile const __u64 *)&st->hits;
		ns += *(volatile const __u64 *)&st->ns;
	}
	dh = hits - s->prev_hits[i];
	dns = (double)(ns - s->prev_ns[i]);
	s->prev_hits[i] = hits;
	s->prev_ns[i] = ns;
	s->load[i] = 0;
	if (s->kernel) {
		/* Armed or not, every hit trapped: that is the floor. */
		*floor += dh * s->st.trap_ns / dt;
		s->rate[i] = (double)dh / dt;
		if (on) {
			s->load[i] = dns / dt;
			s->on_hits[i] = s->on_hits[i] * SAMPLER_COST_DECAY + dh;
			s->on_ns[i] = s->on_ns[i] * SAMPLER_COST_DECAY + dns;
		} else {
			s->st.unarmed_hits += dh;
		}
	} else if (on) {
		double trap = s->turn[i] && s->turn_xbp ? s->st.xbp_trap_ns : s->st.trap_ns;

		s->load[i] = (dh * trap + dns) / dt;
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
		*x = s->load[i] / native;
		return on;
	}
	if (s->on_hits[i] > 0) {
		*x = s->rate[i] * (s->on_ns[i] / s->on_hits[i]) / native;
		return true;
	}
	/* Never hit while armed: nothing to learn unless it is armed and still not hit. */
	*x = 0;
	return s->rate[i] == 0 && (on || s->known[i]);
}

void sampler__tick(struct sampler *s)
{
	unsigned int budget = 100, warmup = 0, turn_ms = 0;
	uint64_t now = now_ns(), dt;
	double probe = 0, floor = 0, cpu, u, native, nat, floor_native, est;
	size_t n = engine__nr_cookies(s->e), armed = 0;
	long hz = sysconf(_SC_CLK_TCK);
	bool was_turn = s->hot_turn;

	engine__get_param(s->e, "overhead_budget", &budget);
	engine__get_param(s->e, "sampler_warmup_cpu_ms", &warmup);
	engine__get_param(s->e, "sampler_turn_ms", &turn_ms);
	if (now < next_tick_ns(s))
		return;
	end_turn(s, now);
	if (grow(s, n))
		return;
	dt = now - s->last_ns;
	s->last_ns = now;
	cpu = cpu_delta_ns(s);

	/* What each site cost in the period that ends now. */
	for (size_t i = 0; i < n && i < s->capacity; i++) {
		measure_site(s, i, dt, &floor);
		probe += s->load[i];
	}
	u = cpu / dt;
	if (u < probe)
		u = probe;	/* tick granularity: never less than what the probes took */
	/*
	 * The floor is an estimate: trap_ns is an int3 trap's cost, and a
	 * kprobe the kernel has since optimized into a jump costs less.  In
	 * the test guest it came to 3.5 CPUs of 2 in some periods.  What the
	 * machine measurably spent beyond the BPF time bounds it.
	 */
	if (floor > u - probe)
		floor = u - probe;
	native = u - probe - floor;
	/* One clock tick is the resolution of /proc/PID/stat and /proc/stat: less is noise. */
	floor_native = hz > 0 ? 1e9 / hz / dt : 0.02;
	nat = native > floor_native ? native : floor_native;
	/*
	 * A site's overhead x = its probe time per unit of the program's own
	 * work does not depend on which other sites are armed.  When probes
	 * take nearly all the time, the program's own time is below the tick
	 * resolution and x comes out low, but far above the hot threshold,
	 * which is all the policy needs.  Take a rise at once, a fall halfway:
	 * a site found hotter than thought must not stay cold.
	 */
	for (size_t i = 0; i < n && i < s->capacity; i++) {
		double x;

		if (!site_overhead(s, i, nat, &x))
			continue;
		s->x[i] = s->known[i] && x < s->x[i] ? (s->x[i] + x) / 2 : x;
		s->known[i] = true;
	}
	s->st.measured_overhead = probe / nat;
	s->cum_floor += floor * dt;
	s->cum_all_native += nat * dt;
	s->st.floor_overhead = s->cum_floor / s->cum_all_native;
	s->st.periods++;
	/*
	 * What a hot turn costs, as a share of the target's CPU time.  A turn
	 * is a few clock ticks long, the resolution of the CPU time it is
	 * measured against: average over many.
	 */
	if (was_turn && u > 0)
		s->turn_cost += ((probe / u < 1 ? probe / u : 1) - s->turn_cost) / 8;

	s->target_cpu_ns += cpu;
	memset(s->turn, 0, n);
	if (budget >= 100 || s->target_cpu_ns < (double)warmup * 1e6) {
		memset(s->next, 1, n);
		est = probe / nat;
	} else {
		s->cum_probe += probe * dt;
		s->cum_native += native * dt;
		memset(s->next, 0, n);
		est = sampler_choose(s->x, s->known, n, budget / 100.0, s->turn_cost, s->next,
				     s->hot, &s->hot_share);
	}
	if (s->cum_native > 0)
		s->st.sampled_overhead = s->cum_probe / s->cum_native;
	for (size_t i = 0; i < n; i++)
		armed += s->next[i];
	s->st.armed = armed;
	s->st.total = n;
	s->st.est_overhead = est;

	if (sets_differ(s->armed, s->next, n)) {
		uint64_t t0 = now_ns();

		if (!arm_set(s, s->next, NULL, true)) {
			memcpy(s->armed, s->next, n);
			s->st.rearms++;
			s->st.rearm_ms = (now_ns() - t0) / 1e6;
		}
	}
	/*
	 * Hot turns are paced, not drawn: time earns credit at hot_share, and
	 * a turn of turn_ms starts once there is credit for it, its sites on a
	 * link of their own (engine__turn), so that starting and ending it
	 * costs an attach of two sites rather than a re-attach of the armed
	 * set.  Short turns, many of them: the budget buys the same time
	 * armed, spread over more turns, so a hot site waits less for its
	 * turn.  At most two turns of credit are kept: a budget raised live
	 * does not bring a burst of turns.
	 */
	if (budget < 100 && s->target_cpu_ns >= (double)warmup * 1e6) {
		s->credit_ns += s->hot_share * dt;
		if (s->credit_ns > turn_ms * 2e6)
			s->credit_ns = turn_ms * 2e6;
		start_turn(s, n, turn_ms);
	}
	if (kcsand_verbose >= 2)
		pr_warn("sampler: %zu/%zu sites armed%s, %s %.2f CPUs, probes %.2f, "
				"overhead %.0f%% this period, %.0f%% since warm-up, %.0f%% expected, "
				"%s %.1f%s\n",
			armed, n, s->hot_turn ? " + a hot turn" : "",
			s->kernel ? "machine" : "target", u, probe, s->st.measured_overhead * 100,
			s->st.sampled_overhead * 100, s->st.est_overhead * 100,
			s->kernel ? "trap floor" : "re-attach",
			s->kernel ? floor / nat * 100 : s->st.rearm_ms, s->kernel ? "%" : " ms");
}

void sampler__get_stats(const struct sampler *s, struct sampler_stats *out)
{
	*out = s->st;
	if (!s->st.total) {
		out->total = s->n;
		out->armed = s->n;
	}
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	kbitmap__free(s->kb);
	if (s->stats)
		munmap((void *)s->stats, s->stats_len);
	free(s->x);
	free(s->load);
	free(s->known);
	free(s->armed);
	free(s->next);
	free(s->hot);
	free(s->turn);
	hot_cycle_free(&s->cycle);
	free(s->prev_hits);
	free(s->prev_ns);
	free(s->rate);
	free(s->on_hits);
	free(s->on_ns);
	free(s);
}

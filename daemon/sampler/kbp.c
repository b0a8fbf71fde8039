// SPDX-License-Identifier: GPL-2.0-only
/*
 * Code-breakpoint sampling in kernel mode.  See kbp.h.
 *
 * A register's move re-targets its event with PERF_EVENT_IOC_MODIFY_ATTRIBUTES:
 * the kernel disables the event on its CPU, changes the address and enables
 * it again.  Done from another CPU, that is an IPI to the event's CPU and a
 * wait for it, which on a busy (or emulated) machine takes milliseconds
 * (docs/kernel-mode.md).  So each CPU has a mover thread of its own, pinned
 * to it: its moves are local calls, with no IPI.
 *
 * Placements, after DataCollider.  Register r samples one site at a time,
 * the same on every CPU (a race between two runs of the same code needs
 * both), and keeps it until the site fires (it ran, on any CPU) or its
 * placement times out: a hot site gives its register back at the next
 * tick, a cold one keeps it long enough to run.  The first CPU's mover (the
 * lead) decides at each tick (the period) and bumps the register's
 * generation; each mover moves its own register when it sees the new one.
 * The BPF side learns a CPU's new site first (kxbp_slots[cpu][r]); a trap
 * still at the old address in between no longer matches and is dropped.
 *
 * The cycle is reshuffled at each pass, so that two sites do not always
 * follow each other.  A site whose placements keep timing out (never runs
 * under this workload) is placed every 2nd, 4th, ... 64th pass only, so
 * that dead code costs the cycle less and live code comes round sooner; a
 * fire gives it every pass again.
 *
 * Evidence.  At subsystem scale the cycle is hours long and most of its
 * sites never run, so four fifths of the register time go where code runs
 * (kbp_policy__source's shares, by the time each source's placements held
 * a register): the warm queue holds the sites, not yet run, of each
 * function that a cpu-clock sample landed in (kip.c) or whose first site
 * fired; the live list holds every site that fired, each placed again in
 * turn, for the checks a race needs, with 60% of the time.  A site enters
 * the warm queue once; one that times out there is left to the cycle,
 * which keeps a fifth of the time.
 *
 * Pinned sites (--pin).  Register 0 cycles over them alone, with a cursor,
 * passes and shuffle of their own, so that each comes round every few
 * ticks however large the whole cycle is: what a test or a user needs
 * checked is checked, not left to a pass over 100,000 sites or to whether
 * a sample saw its function.  The other registers take the turns above
 * (which skip a site register 0 is on).  With one register in use, its
 * placements alternate between the pinned sites and the turns, so that
 * neither stops.  A pinned placement waits KBP_TIMEOUT_TICKS (it was named
 * as code that runs) and is not counted in the turns' sources.
 *
 * The budget.  Once a second the lead measures what sampling cost (the
 * moves, the checks' BPF time with their stalls, and the traps, at the cost
 * calibrated at start) against the CPU time that elapsed (the wall clock
 * times the CPUs online: an idle machine is not a reason to sample less),
 * and kbp_policy__next() sets the period (the tick) and the registers in use.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kbp.h"
#include "kip.h"
#include "ksampler.h"
#include "kcsand.h"
#include "kcsand.skel.h"
#include "util/clock.h"
#include "util/print.h"
#include "util/thread.h"

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
	SEEN_HOT = 64,		/* a live placement of it took all its checks: in hot[] */
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

struct kbp {
	struct kcsand_bpf *skel;
	struct kbp_opts o;
	uint64_t *addr;
	uint32_t *site;
	uint32_t *order;		/* the shuffled cycle (the lead only, after start) */
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
	uint32_t *hot;			/* live sites that took all a placement's checks */
	size_t nhot, hot_cur;
	uint64_t hot_passes;
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
	uint64_t cursor;		/* the next position in the cycle (the lead only) */
	uint32_t *pin_order;		/* the pinned sites' own cycle, shuffled (the lead only) */
	size_t npin;
	uint64_t pin_cursor, pin_passes;	/* as cursor and passes, of pin_order */
	bool pin_turn;			/* one register in use: this placement is pin_order's */
	uint64_t gens;			/* placements made, the last one's generation */
	uint64_t t0_ns;			/* sampling started */
	unsigned int seed;		/* of the reshuffles (the lead only) */
	struct kbp_control ctl;
	struct kbp_tally tally;
	double trap_ns;
	_Atomic unsigned int min_period_us, max_period_us, min_regs;
	_Atomic uint64_t overhead_ppm;	/* the last interval's share */
	_Atomic uint64_t passes;	/* complete passes over the cycle */
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

static void shuffle(struct kbp *k, uint32_t *order, size_t n)
{
	for (size_t i = n - 1; i > 0 && n; i--) {
		size_t j = ((size_t)rand_r(&k->seed) << 16 ^ rand_r(&k->seed)) % (i + 1);
		uint32_t t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
}

/* Is CPU c online?  A CPU without an online file (the boot CPU, often) cannot go offline. */
static bool cpu_online(int c)
{
	char path[64];
	FILE *f;
	int on = 1;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", c);
	f = fopen(path, "re");
	if (!f)
		return true;
	if (fscanf(f, "%d", &on) != 1)
		on = 1;
	fclose(f);
	return on != 0;
}

/*
 * Every CPU the machine may bring online (up to KBP_MAX_CPUS, said when
 * there are more), whether online now or not: one brought online later is
 * found by the hotplug scan (scan_hotplug).
 */
static int all_cpus(struct kbp *k)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	unsigned int up = 0;

	if (n > KBP_MAX_CPUS)
		pr_warn("breakpoints: the machine has %ld CPUs: only the first %d are sampled\n",
			n, KBP_MAX_CPUS);
	for (long c = 0; c < n && c < KBP_MAX_CPUS; c++) {
		struct kbp_cpu *kc = &k->cpu[k->ncpus++];

		kc->k = k;
		kc->cpu = (int)c;
		kc->online = cpu_online((int)c);
		up += kc->online;
		memset(kc->fd, -1, sizeof(kc->fd));
		kc->ip.fd = -1;
	}
	return up ? 0 : -ENODEV;
}

/* Set bit on site i; true when it was not set before. */
static bool mark_site(struct kbp *k, size_t i, uint8_t bit)
{
	return !(atomic_fetch_or(&k->seen[i], bit) & bit);
}

static void refuse(struct kbp *k, size_t i, int err)
{
	if (!mark_site(k, i, SEEN_REFUSED))
		return;
	k->refused++;
	pr_info("breakpoints: the kernel refuses an execute breakpoint at 0x%llx: %s\n",
		(unsigned long long)k->addr[i], strerror(-err));
}

/*
 * The BPF side's slot of register r on CPU c: which site it samples, and
 * how far apart its checks are (a tick over KBP_CHECK_SPREAD).
 */
static int set_slot(struct kbp *k, const struct kbp_cpu *c, unsigned int r, size_t i)
{
	struct kcsand_kxbp_slot s;
	__u32 key = (__u32)c->cpu * KCSAND_KXBP_SLOTS + r;
	int fd = bpf_map__fd(k->skel->maps.kxbp_slots);

	if (!bpf_map_lookup_elem(fd, &key, &s)) {
		k->old_hits += s.hits;
		k->old_checks += s.checks;
		k->old_ns += s.ns;
	}
	s = (struct kcsand_kxbp_slot){ .ip = k->addr[i], .site = k->site[i],
				       .gap_ns = k->period_ns / KBP_CHECK_SPREAD };
	return bpf_map_update_elem(fd, &key, &s, BPF_ANY) ? -errno : 0;
}

/* Open register r's event on CPU c at site i; -errno (-EINVAL: address refused). */
static int open_event(struct kbp *k, struct kbp_cpu *c, unsigned int r, size_t i)
{
	LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = r);
	struct perf_event_attr attr = k->attr;
	int fd;

	attr.bp_addr = k->addr[i];
	set_slot(k, c, r, i);
	fd = syscall(__NR_perf_event_open, &attr, -1, c->cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	c->fd[r] = fd;
	c->link[r] = bpf_program__attach_perf_event_opts(k->skel->progs.kcsand_kxbp, fd, &po);
	return c->link[r] ? 0 : -errno;
}

static void close_event(struct kbp_cpu *c, unsigned int r)
{
	if (c->link[r])
		bpf_link__destroy(c->link[r]);	/* closes the event too */
	else if (c->fd[r] >= 0)
		close(c->fd[r]);
	c->link[r] = NULL;
	c->fd[r] = -1;
}

/* CPU c's events and IP sampler, closed. */
static void close_cpu_events(struct kbp_cpu *c)
{
	for (unsigned int r = 0; r < KCSAND_KXBP_SLOTS; r++)
		close_event(c, r);
	if (c->ip.fd >= 0)
		kip__close(&c->ip);
}

/* Move register r of CPU c to site i; a refusal is marked, and the lead places it again. */
static void move(struct kbp *k, struct kbp_cpu *c, unsigned int r, size_t i)
{
	struct perf_event_attr attr = k->attr;
	uint64_t t = clock__now_ns();

	set_slot(k, c, r, i);
	attr.bp_addr = k->addr[i];
	if (ioctl(c->fd[r], PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &attr)) {
		refuse(k, i, -errno);
		return;
	}
	/* The move enabled a parked event again (the kernel does unless attr.disabled); say it. */
	if (c->parked[r] && !ioctl(c->fd[r], PERF_EVENT_IOC_ENABLE, 0))
		c->parked[r] = false;
	c->move_ns += clock__now_ns() - t;
	c->moves++;
}

/* A register the budget took away: its event off until a move gives it back. */
static void park(struct kbp_cpu *c, unsigned int r)
{
	if (!c->parked[r] && !ioctl(c->fd[r], PERF_EVENT_IOC_DISABLE, 0))
		c->parked[r] = true;
}

static void slots_sum(const struct kbp *k, uint64_t *hits, uint64_t *checked, uint64_t *ns)
{
	int fd = bpf_map__fd(k->skel->maps.kxbp_slots);
	struct kcsand_kxbp_slot s;

	*hits = k->old_hits;
	*checked = k->old_checks;
	*ns = k->old_ns;
	for (unsigned int c = 0; c < k->ncpus; c++) {
		for (__u32 r = 0; r < k->nregs; r++) {
			__u32 key = (__u32)k->cpu[c].cpu * KCSAND_KXBP_SLOTS + r;

			if (!bpf_map_lookup_elem(fd, &key, &s)) {
				*hits += s.hits;
				*checked += s.checks;
				*ns += s.ns;
			}
		}
	}
}

/* Traps and checks of register r's placement on site i so far, over every CPU on it. */
static void placement_sum(const struct kbp *k, unsigned int r, uint32_t i, uint64_t *hits,
			  uint64_t *checks)
{
	int fd = bpf_map__fd(k->skel->maps.kxbp_slots);
	struct kcsand_kxbp_slot s;

	*hits = *checks = 0;
	for (unsigned int c = 0; c < k->ncpus; c++) {
		__u32 key = (__u32)k->cpu[c].cpu * KCSAND_KXBP_SLOTS + r;

		if (!k->cpu[c].online || bpf_map_lookup_elem(fd, &key, &s))
			continue;
		/* A mover not yet moved still has the earlier site's counts. */
		if (s.ip == k->addr[i] && s.site == k->site[i]) {
			*hits += s.hits;
			*checks += s.checks;
		}
	}
}

static void note_plan(struct kbp *k)
{
	unsigned int us = k->period_ns / 1000;

	if (us < k->min_period_us)
		k->min_period_us = us;
	if (us > k->max_period_us)
		k->max_period_us = us;
	if (k->regs < k->min_regs)
		k->min_regs = k->regs;
}

/* CPUs online now, as the hotplug scan last saw them. */
static unsigned int cpus_up(const struct kbp *k)
{
	unsigned int up = 0;

	for (unsigned int c = 0; c < k->ncpus; c++)
		up += k->cpu[c].online;
	return up;
}

/*
 * Once a second, from the lead: the last interval's cost against the CPU
 * time that elapsed, and the period and registers for the next.
 */
static void control(struct kbp *k, uint64_t now)
{
	struct kbp_control *ctl = &k->ctl;
	uint64_t hits, checked, bpf_ns, move_ns = 0;
	double elapsed, probes, cost, share;
	struct kbp_plan p;

	if (ctl->primed && now - ctl->t_ns < KBP_CONTROL_NS)
		return;
	slots_sum(k, &hits, &checked, &bpf_ns);
	for (unsigned int c = 0; c < k->ncpus; c++)
		move_ns += k->cpu[c].move_ns;
	elapsed = (double)(now - ctl->t_ns) * cpus_up(k);
	if (!ctl->primed) {
		ctl->primed = true;
		goto out;
	}
	/* An IP sample is a timer interrupt: about a trap's cost. */
	probes = (double)(bpf_ns - ctl->bpf_ns) +
		 (double)(hits - ctl->hits + k->tally.ips - ctl->ips) * k->trap_ns;
	cost = probes + (double)(move_ns - ctl->move_ns);
	share = elapsed > 0 ? cost / elapsed : 0;
	k->overhead_ppm = share < 1e6 ? (uint64_t)(share * 1e6) : (uint64_t)1e12;
	pthread_mutex_lock(&k->lock);
	p = (struct kbp_plan){ .period_us = k->period_ns / 1000, .regs = k->regs };
	kbp_policy__next(&p, share, k->o.budget, k->nregs, KBP_MIN_PERIOD_US, KBP_MAX_PERIOD_US);
	if (p.period_us * 1000ull != k->period_ns || p.regs != k->regs) {
		k->period_ns = p.period_us * 1000ull;
		k->regs = p.regs;
		note_plan(k);
		pr_debug("breakpoints: cost %.1f%% of the CPU time elapsed: period %u us, "
			 "%u registers\n", share * 100, p.period_us, p.regs);
	}
	pthread_mutex_unlock(&k->lock);
out:
	ctl->t_ns = now;
	ctl->hits = hits;
	ctl->checked = checked;
	ctl->bpf_ns = bpf_ns;
	ctl->move_ns = move_ns;
	ctl->ips = k->tally.ips;
}

/*
 * May site i take a register now?  Not refused, not on another register,
 * and, if its placements kept timing out, in one pass of 2^misses (each
 * site its own pass, by its index, so that dead sites do not all come back
 * at once).
 */
static bool free_site(const struct kbp *k, uint32_t i)
{
	if (k->seen[i] & SEEN_REFUSED)
		return false;
	for (unsigned int r = 0; r < k->nregs; r++)
		if (k->reg[r].gen && k->reg[r].i == i)
			return false;
	return true;
}

static bool placeable(const struct kbp *k, uint32_t i)
{
	return free_site(k, i) && kbp_policy__due(k->misses[i], k->passes, i);
}

/*
 * The next site of the whole cycle that may be placed, reshuffling at each
 * pass; -1: none.
 */
static long next_site(struct kbp *k)
{
	for (size_t tries = 0; tries <= k->n; tries++) {
		uint64_t pos = k->cursor++;
		uint32_t i;

		if (pos && pos % k->n == 0) {
			shuffle(k, k->order, k->n);
			k->passes++;
			/* debug (-vv): a run over a few cold sites can end once a pass is done. */
			pr_debug("breakpoints: pass %llu over the %zu sites done, %.1f s in\n",
				 (unsigned long long)k->passes, k->n,
				 (clock__now_ns() - k->t0_ns) / 1e9);
		}
		i = k->order[pos % k->n];
		if (placeable(k, i))
			return i;
	}
	return -1;
}

/* Function f ran: its sites not yet run to the warm queue, once. */
static void warm_fn(struct kbp *k, uint32_t f)
{
	const struct kbp_fnrec *fr = &k->fns[f];

	if (k->fwarm[f])
		return;
	k->fwarm[f] = 1;
	k->tally.warm_fns++;
	for (uint32_t j = 0; j < fr->count; j++) {
		uint32_t i = k->byfn[fr->first + j];

		/* Each site once, so the ring of n never overruns. */
		if (!(k->seen[i] & (SEEN_RAN | SEEN_REFUSED)) && mark_site(k, i, SEEN_WARM))
			k->warm[k->warm_tail++ % k->n] = i;
	}
}

/* A kernel IP sample: the function it fell in, if it is one of ours, ran. */
static void ip_seen(void *ctx, uint64_t ip)
{
	struct kbp *k = ctx;
	size_t lo = 0, hi = k->nfns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->fns[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && ip < k->fns[lo - 1].end)
		warm_fn(k, lo - 1);
}

/* Each tick, from the lead: the IP samples of every CPU since the last. */
static void drain_ips(struct kbp *k)
{
	for (unsigned int c = 0; c < k->ncpus; c++)
		if (k->cpu[c].ip.fd >= 0)
			k->tally.ips += kip__drain(&k->cpu[c].ip, ip_seen, k);
}

/* The warm queue's next site that has still not run and is free; -1: none. */
static long next_warm(struct kbp *k)
{
	while (k->warm_head < k->warm_tail) {
		uint32_t i = k->warm[k->warm_head++ % k->n];

		if (!(k->seen[i] & SEEN_RAN) && free_site(k, i))
			return i;
	}
	return -1;
}

/*
 * A ring's next free site, in turn; -1: none.  A site that fired once and
 * then timed out is placed every 2nd, 4th, ... pass over the ring
 * (kbp_policy__due), as in the cycle: code that ran at start-up and no more
 * would otherwise hold live's register time in timeouts.
 */
static long next_in_ring(struct kbp *k, const uint32_t *ring, size_t n, size_t *cur,
			 uint64_t *passes)
{
	for (size_t t = 0; t <= n; t++) {
		uint64_t pos = (*cur)++;
		uint32_t i = ring[pos % n];

		if (pos && pos % n == 0)
			(*passes)++;
		if (free_site(k, i) && kbp_policy__due(k->misses[i], *passes, i))
			return i;
	}
	return -1;
}

/*
 * The live list's next site: every other one from the hot sites, those
 * whose live placement took all its checks.  A race needs checks of the
 * same hot code over and over (generic_fillattr's took about 2,000
 * placements of its 37 sites when pinned), and a round over every site
 * that ever fired gave each some ten placements in ten minutes.
 */
static long next_live(struct kbp *k)
{
	long i = -1;

	if (k->nhot && (k->hot_turn = !k->hot_turn))
		i = next_in_ring(k, k->hot, k->nhot, &k->hot_cur, &k->hot_passes);
	return i >= 0 ? i : next_in_ring(k, k->live, k->nlive, &k->live_cur, &k->live_passes);
}

/* The next placement's site and its source (kbp_policy__source); -1: none. */
static long choose_site(struct kbp *k, enum kbp_source *from)
{
	bool have[KBP_SOURCES] = { true, k->warm_head < k->warm_tail, k->nlive > 0 };

	for (;;) {
		int s = kbp_policy__source(k->spent_ns, have);
		long i;

		if (s < 0)
			return -1;
		i = s == KBP_CYCLE ? next_site(k) : s == KBP_WARM ? next_warm(k) : next_live(k);
		if (i >= 0) {
			*from = s;
			return i;
		}
		have[s] = false;
	}
}

/*
 * The next pinned site, as next_site() over pin_order, whose passes are its
 * own: a pinned site that never runs is placed less often (kbp_policy__due)
 * in pin_order's passes, not the whole cycle's.  -1: none.
 */
static long next_pinned(struct kbp *k)
{
	for (size_t tries = 0; tries <= k->npin; tries++) {
		uint64_t pos = k->pin_cursor++;
		uint32_t i;

		if (pos && pos % k->npin == 0) {
			shuffle(k, k->pin_order, k->npin);
			k->pin_passes++;
		}
		i = k->pin_order[pos % k->npin];
		if (free_site(k, i) && kbp_policy__due(k->misses[i], k->pin_passes, i))
			return i;
	}
	return -1;
}

/*
 * Register r's next site, its source and whether it is a pinned placement:
 * register 0's from the pinned sites (see the top), else choose_site()'s
 * turns; -1: none.
 */
static long next_for(struct kbp *k, unsigned int r, enum kbp_source *from, bool *pin)
{
	long i = -1;

	if (r == 0 && k->npin && (k->regs > 1 || (k->pin_turn = !k->pin_turn)))
		i = next_pinned(k);
	*pin = i >= 0;
	return i < 0 ? choose_site(k, from) : i;
}

/* Register r's placement ended at now: what it saw of its site, and what it held. */
static void end_placement(struct kbp *k, unsigned int r, uint64_t hits, uint64_t checks,
			  uint64_t now)
{
	uint32_t i = k->reg[r].i;
	struct kbp_tally *t = &k->tally;
	uint64_t held = now > k->reg[r].since_ns ? now - k->reg[r].since_ns : 0;

	t->placements++;
	t->capped += k->reg[r].capped;
	t->from[k->reg[r].from] += !k->reg[r].pin;
	/* A pinned placement is register 0's own, no source's: not in the shares. */
	k->spent_ns[k->reg[r].from] += k->reg[r].pin ? 0 : held;
	t->held_from[k->reg[r].from] += k->reg[r].pin ? 0 : held;
	t->held_ns += held;
	t->fired_ns += hits ? held : 0;
	if (k->reg[r].from == KBP_LIVE && !k->reg[r].pin && checks >= KBP_LIVE_CHECKS &&
	    mark_site(k, i, SEEN_HOT))
		k->hot[k->nhot++] = i;
	if (hits) {
		t->fired++;
		t->fired_from[k->reg[r].from] += !k->reg[r].pin;
		k->misses[i] = 0;
		if (mark_site(k, i, SEEN_RAN)) {
			t->ran++;
			k->live[k->nlive++] = i;
			if (k->fns)
				warm_fn(k, k->fid[i]);	/* its function's other sites run too */
			t->pin_ran += !!(k->seen[i] & SEEN_PIN);
		}
	} else {
		t->timeouts++;
		if (k->misses[i] < KBP_MAX_MISSES)
			k->misses[i]++;	/* kbp_policy__due() places it less often */
	}
	if (checks && mark_site(k, i, SEEN_CHECKED)) {
		t->checked++;
		t->pin_checked += !!(k->seen[i] & SEEN_PIN);
		pr_debug("breakpoints: 0x%llx checked for the first time, %.1f s in\n",
			 (unsigned long long)k->addr[i],
			 (clock__now_ns() - k->t0_ns) / 1e9);
	}
}

/*
 * Put register r on site i, from source `from` (the movers follow its
 * generation).  A site with no evidence of running waits fewer ticks.
 */
static void place(struct kbp *k, unsigned int r, uint32_t i, enum kbp_source from, bool pin,
		  uint64_t now)
{
	bool known = pin || from != KBP_CYCLE || (k->seen[i] & (SEEN_RAN | SEEN_WARM));

	k->reg[r] = (struct kbp_reg){ .gen = ++k->gens, .i = i, .since_ns = now, .from = from,
				      .pin = pin,
				      .ticks = known ? KBP_TIMEOUT_TICKS : KBP_COLD_TICKS };
	k->tally.pin_placements += !!(k->seen[i] & SEEN_PIN);
	if (mark_site(k, i, SEEN_PLACED))
		k->sampled++;
}

/*
 * Is register r's placement over, at a tick?  When it timed out or its
 * site was refused; once it fired, at once for a site the cycle or warm
 * found (it is live from now on), while a live site's placement stays for
 * its checks, within a bound of ticks and of traps (kbp_policy__linger).
 * A move costs more than a check under emulation (2 to 2.5 ms in the test
 * guest: TCG flushes its translations), so a hot site that gave its
 * register back at the first fire had one or two checks a move.
 */
static bool placement_over(const struct kbp *k, struct kbp_reg *g, uint64_t hits,
			   uint64_t checks, uint64_t now)
{
	uint64_t timeout = kbp_policy__timeout_ns(k->period_ns, g->ticks);
	enum kbp_linger l;

	if (k->seen[g->i] & SEEN_REFUSED)
		return true;
	if (!hits || g->from != KBP_LIVE || g->pin)
		return hits || now - g->since_ns >= timeout;
	if (!g->fired_ns)
		g->fired_ns = now;
	l = kbp_policy__linger(hits, checks, now - g->fired_ns, k->period_ns);
	g->capped = l == KBP_LINGER_TRAPS;
	return l != KBP_LINGER_ON || now - g->since_ns >= timeout;
}

/*
 * The lead's tick, under lock: a register whose site fired (on any CPU)
 * or timed out, or was refused, moves on; the registers the budget took
 * away are parked.  True when a placement changed.
 */
static bool schedule(struct kbp *k, uint64_t now)
{
	bool changed = false;

	for (unsigned int r = 0; r < k->nregs; r++) {
		struct kbp_reg *g = &k->reg[r];
		uint64_t hits = 0, checks = 0;
		enum kbp_source from = g->from;
		bool pin = g->pin;
		long i;

		if (g->gen)
			placement_sum(k, r, g->i, &hits, &checks);
		if (g->gen && r >= k->regs) {
			end_placement(k, r, hits, checks, now);
			g->gen = 0;
			changed = true;
			continue;
		}
		if (r >= k->regs || (g->gen && !placement_over(k, g, hits, checks, now)))
			continue;
		if (g->gen)
			end_placement(k, r, hits, checks, now);
		g->gen = 0;	/* its site may come round again at once in a small cycle */
		i = next_for(k, r, &from, &pin);
		changed = true;
		if (i < 0 && (k->seen[g->i] & SEEN_REFUSED))
			continue;	/* nothing left to place: parked */
		place(k, r, i < 0 ? g->i : (uint32_t)i, from, pin, now);
	}
	return changed;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0;
}

/*
 * Where the registers' time went: on placements that fired (code that ran
 * while sampled: what finds races), and by source (their shares, kbp.h).
 */
static void print_register_time(const struct kbp *k, const char *when)
{
	const uint64_t *s = k->tally.held_from;
	uint64_t all = s[KBP_CYCLE] + s[KBP_WARM] + s[KBP_LIVE];

	pr_info("breakpoints: register time, %s: %.0f%% on placements that fired; by source "
		"the cycle %.0f%%, warm %.0f%%, live %.0f%% (%zu hot sites of %zu)\n", when,
		pct(k->tally.fired_ns, k->tally.held_ns), pct(s[KBP_CYCLE], all),
		pct(s[KBP_WARM], all), pct(s[KBP_LIVE], all), k->nhot, k->nlive);
}

/* How many sites ran and were checked, and what the placements did (info: -v). */
static void print_coverage(struct kbp *k, const char *when)
{
	struct kbp_tally *t = &k->tally;

	pr_info("breakpoints: coverage, %s: %zu sites ran (+%zu), %zu checked (+%zu), of %zu; "
		"%llu placements, %llu fired, %llu timed out, %llu passes\n", when,
		(size_t)t->ran, t->ran - t->ran_then, (size_t)t->checked,
		t->checked - t->checked_then, k->n, (unsigned long long)t->placements,
		(unsigned long long)t->fired, (unsigned long long)t->timeouts,
		(unsigned long long)k->passes);
	pr_info("breakpoints: evidence, %s: %zu functions seen running (%llu IP samples); "
		"placements from the cycle %llu (%llu fired), warm %llu (%llu), live %llu (%llu)\n",
		when, t->warm_fns, (unsigned long long)t->ips,
		(unsigned long long)t->from[KBP_CYCLE], (unsigned long long)t->fired_from[KBP_CYCLE],
		(unsigned long long)t->from[KBP_WARM], (unsigned long long)t->fired_from[KBP_WARM],
		(unsigned long long)t->from[KBP_LIVE], (unsigned long long)t->fired_from[KBP_LIVE]);
	print_register_time(k, when);
	t->ran_then = t->ran;
	t->checked_then = t->checked;
	if (k->npin)
		pr_info("breakpoints: pinned sites, %s: %zu ran, %zu checked, of %zu; %llu "
			"placements\n", when, (size_t)t->pin_ran, (size_t)t->pin_checked, k->npin,
			(unsigned long long)t->pin_placements);
}

/* Once a minute (the lead): coverage grows as the cycle comes round. */
static void coverage_minute(struct kbp *k, uint64_t now)
{
	struct kbp_tally *t = &k->tally;
	char when[32];

	if (!t->coverage_ns)
		t->coverage_ns = now;
	if (now - t->coverage_ns < KBP_COVERAGE_NS)
		return;
	t->coverage_ns = now;
	snprintf(when, sizeof(when), "minute %u", ++t->minute);
	print_coverage(k, when);
}

/*
 * Pinned to its CPU, so that its moves are local calls, and real-time
 * (SCHED_FIFO, the lowest priority): a mover starved by the workload would
 * leave its registers on sites that may be hot, and the budget (the lead's
 * mover) unenforced.  Capped (thread.h's duty cap): under QEMU the lead's
 * 2 ms ticks alone took up to 89% of a CPU and set off the guest's RT
 * throttling (bench/kernel/p15-rt-share.sh).  Either failure is said: moves then cost an IPI, or
 * wait for the workload.
 */
static void mover_setup(struct kbp_cpu *c)
{
	int pin_err, fifo_err;

	thread__pin_fifo(c->cpu, 1, &pin_err, &fifo_err);
	c->pinned = !pin_err;
	if (pin_err)
		pr_warn("breakpoints: cannot pin CPU %d's mover to it: %s (its moves are IPIs "
			"from another CPU)\n", c->cpu, strerror(-pin_err));
	if (fifo_err && c == c->k->lead)
		pr_warn("breakpoints: cannot make the movers real-time: %s (a busy machine may "
			"delay moves and the budget)\n", strerror(-fifo_err));
}

static void *mover(void *arg);

/* CPU c came online: its registers on the current placements, and a mover. */
static int cpu_up(struct kbp *k, struct kbp_cpu *c)
{
	int err = 0;

	for (unsigned int r = 0; r < k->nregs && !err; r++) {
		err = open_event(k, c, r, k->reg[r].i);
		c->gen[r] = k->reg[r].gen;
		if (!err && !c->gen[r])
			park(c, r);
	}
	c->down = false;
	if (!err && k->fns)
		kip__open(&c->ip, c->cpu, KBP_IP_HZ);	/* none: its evidence is the fires' */
	if (!err)
		err = -pthread_create(&c->mover, NULL, mover, c);
	if (err) {
		for (unsigned int r = 0; r < KCSAND_KXBP_SLOTS; r++)
			close_event(c, r);
		kip__close(&c->ip);
		pr_warn("breakpoints: CPU %d came online but cannot be sampled: %s\n", c->cpu,
			strerror(-err));
		return err;
	}
	c->started = true;
	pr_warn("breakpoints: CPU %d came online: sampling it with %u registers\n", c->cpu,
		k->nregs);
	return 0;
}

/* CPU c went offline: its mover stops, its events close (a new start if it comes back). */
static void cpu_down(struct kbp *k, struct kbp_cpu *c)
{
	if (c->started) {
		pthread_mutex_lock(&k->lock);
		c->down = true;
		pthread_cond_broadcast(&k->wake);
		pthread_mutex_unlock(&k->lock);
		pthread_join(c->mover, NULL);
		c->started = false;
	}
	close_cpu_events(c);
	pr_warn("breakpoints: CPU %d went offline\n", c->cpu);
}

/*
 * Once a second, from the lead: CPUs brought online since are sampled, and
 * those taken offline let go (their events would stay off, and their movers
 * unpinned, when they came back).  The lead's own CPU is not scanned: its
 * mover does the scan.
 */
static void scan_hotplug(struct kbp *k, uint64_t now)
{
	if (now - k->hotplug_ns < KBP_CONTROL_NS)
		return;
	k->hotplug_ns = now;
	for (unsigned int i = 0; i < k->ncpus; i++) {
		struct kbp_cpu *c = &k->cpu[i];
		bool on = cpu_online(c->cpu);

		if (c == k->lead || on == c->online)
			continue;
		c->online = on;
		if (on)
			cpu_up(k, c);
		else
			cpu_down(k, c);
	}
}

/* Does CPU c have a register whose placement it has not followed yet?  Under lock. */
static bool behind(const struct kbp *k, const struct kbp_cpu *c)
{
	for (unsigned int r = 0; r < k->nregs; r++)
		if (c->gen[r] != k->reg[r].gen)
			return true;
	return false;
}

/*
 * Under lock, until there is something to do: the lead waits for its next
 * tick and then places; the others wait for a placement they have not
 * followed.  False when the mover is to stop.
 */
static bool wait_turn(struct kbp *k, struct kbp_cpu *c, uint64_t *tick)
{
	for (;;) {
		uint64_t now = clock__now_ns();
		uint64_t due = c == k->lead ? *tick : now + KBP_CONTROL_NS;
		struct timespec ts = { .tv_sec = due / 1000000000ull,
				       .tv_nsec = due % 1000000000ull };

		if (k->stop || c->down)
			return false;
		if (c == k->lead && now >= due) {
			/* A late tick does not bunch up: the next is a period from now. */
			*tick = (now - due < k->period_ns ? due : now) + k->period_ns;
			if (schedule(k, now))
				pthread_cond_broadcast(&k->wake);
			return true;
		}
		if (c != k->lead && behind(k, c))
			return true;
		pthread_cond_timedwait(&k->wake, &k->lock, &ts);
	}
}

/* The duty cap's rest (thread.h), until `until`: cut short when the mover is to stop. */
static void rest(struct kbp *k, const struct kbp_cpu *c, uint64_t until)
{
	struct timespec ts = { until / 1000000000ull, until % 1000000000ull };

	if (!until)
		return;
	pthread_mutex_lock(&k->lock);
	while (!k->stop && !c->down && clock__now_ns() < until)
		pthread_cond_timedwait(&k->wake, &k->lock, &ts);
	pthread_mutex_unlock(&k->lock);
}

/*
 * At the stop, from CPU c's mover: the CPU's events closed here, on the
 * CPU, where closing them from kbp__free()'s thread would be an IPI to
 * this CPU and an unbounded wait in the kernel for it (docs/kernel-mode.md).
 * Not before the lead has left its loop: it drains every CPU's IP ring.
 */
static void release_on_cpu(struct kbp *k, struct kbp_cpu *c)
{
	pthread_mutex_lock(&k->lock);
	if (c == k->lead) {
		k->lead_done = true;
		pthread_cond_broadcast(&k->wake);
	}
	/* Or until the lead's hotplug scan takes the CPU down: it then closes them. */
	while (!k->lead_done && !c->down)
		pthread_cond_wait(&k->wake, &k->lock);
	pthread_mutex_unlock(&k->lock);
	if (c->down || !thread__on_cpu(c->cpu))
		return;		/* not pinned (said at start): kbp__free() closes them */
	close_cpu_events(c);
	c->released = true;
}

/*
 * A CPU's mover: each register to its placement's site when the lead
 * places it, or parked when the budget took it away.
 */
static void *mover(void *arg)
{
	struct kbp_cpu *c = arg;
	struct kbp *k = c->k;
	uint64_t tick = clock__now_ns(), cpu0, base = c->cpu_ns;	/* a CPU back online: added */
	struct thread_duty duty;

	mover_setup(c);
	thread__duty_init(&duty);
	cpu0 = clock__thread_cpu_ns();
	for (;;) {
		struct kbp_reg reg[KCSAND_KXBP_SLOTS];
		bool go;

		pthread_mutex_lock(&k->lock);
		go = wait_turn(k, c, &tick);
		memcpy(reg, k->reg, sizeof(reg));
		pthread_mutex_unlock(&k->lock);
		if (!go)
			break;
		for (unsigned int r = 0; r < k->nregs; r++) {
			if (reg[r].gen == c->gen[r])
				continue;
			if (reg[r].gen)
				move(k, c, r, reg[r].i);
			else
				park(c, r);
			c->gen[r] = reg[r].gen;
		}
		if (c == k->lead) {
			drain_ips(k);
			if (k->o.budget > 0)
				control(k, clock__now_ns());
			scan_hotplug(k, clock__now_ns());
			coverage_minute(k, clock__now_ns());
		}
		c->cpu_ns = base + clock__thread_cpu_ns() - cpu0;
		/* Real-time: it rests by construction, or its ticks could hold the CPU (thread.h). */
		rest(k, c, thread__duty_until(&duty));
	}
	if (k->stop && !c->down)
		release_on_cpu(k, c);
	return NULL;
}

/* Open register r on every CPU, on its next site; -errno when the CPUs have none free. */
static int open_reg(struct kbp *k, unsigned int r)
{
	for (int tries = 0; tries < KBP_MAX_TRIES; tries++) {
		enum kbp_source from = KBP_CYCLE;
		bool pin;
		long i = next_for(k, r, &from, &pin);
		int err = i < 0 ? -ENOENT : 0;

		for (unsigned int c = 0; c < k->ncpus && !err; c++)
			if (k->cpu[c].online)
				err = open_event(k, &k->cpu[c], r, i);
		if (!err) {
			place(k, r, i, from, pin, clock__now_ns());
			for (unsigned int c = 0; c < k->ncpus; c++)
				k->cpu[c].gen[r] = k->reg[r].gen;
			return 0;
		}
		for (unsigned int c = 0; c < k->ncpus; c++)
			close_event(&k->cpu[c], r);
		if (err != -EINVAL)
			return err;
		refuse(k, i, err);
	}
	return -ENOENT;
}

static int open_regs(struct kbp *k)
{
	int err = 0;

	k->attr = (struct perf_event_attr){
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(k->attr),
		.bp_type = HW_BREAKPOINT_X,
		.bp_len = sizeof(long),	/* what x86 wants for an execute breakpoint */
		.sample_period = 1,
		.exclude_user = 1,
		.exclude_hv = 1,
	};
	for (unsigned int r = 0; r < k->o.nregs && r < KCSAND_KXBP_SLOTS; r++) {
		err = open_reg(k, r);
		if (err == -ENOSPC || err == -EBUSY)
			break;		/* no free debug register: sample with fewer */
		if (err)
			return k->nregs ? 0 : err;
		k->nregs++;
	}
	return k->nregs ? 0 : err;
}

/*
 * What a trap on a sampled site costs beyond its check: getppid(2) with an
 * execute breakpoint in it, on this thread only, against without.  The
 * program is kcsand_kxbp on the cookie of a slot no register samples (r =
 * KCSAND_KXBP_SLOTS - 1, never given to sampling), so it returns at once,
 * as it does on a hot site past its checks.  0, said, when it cannot be
 * measured: the budget then counts the checks and the moves only.
 */
static double calibrate_trap(struct kbp *k)
{
	LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = KCSAND_KXBP_SLOTS - 1);
	struct perf_event_attr attr = k->attr;
	struct bpf_link *l;
	double without, with;
	int fd;

	if (!k->o.calib_addr)
		return 0;
	without = kcpu__getppid_ns();
	attr.bp_addr = k->o.calib_addr;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		pr_warn("breakpoints: cannot time a trap (%s): the budget counts checks and "
			"moves only\n", strerror(errno));
		return 0;
	}
	l = bpf_program__attach_perf_event_opts(k->skel->progs.kcsand_kxbp, fd, &po);
	if (!l) {
		pr_warn("breakpoints: cannot time a trap (%s): the budget counts checks and "
			"moves only\n", strerror(errno));
		close(fd);
		return 0;
	}
	with = kcpu__getppid_ns();
	bpf_link__destroy(l);	/* closes fd */
	pr_info("breakpoints: a trap costs %.0f ns (getppid(2): %.0f ns without, %.0f "
		"with)\n", with > without ? with - without : 0, without, with);
	return with > without ? with - without : 0;
}

/* The pinned sites' own cycle (--pin), said with -v; -ENOMEM. */
static int pin_sites(struct kbp *k, const bool *pin)
{
	for (size_t i = 0; pin && i < k->n; i++)
		k->npin += pin[i];
	if (!k->npin)
		return 0;
	k->pin_order = malloc(k->npin * sizeof(*k->pin_order));
	if (!k->pin_order)
		return -ENOMEM;
	for (size_t i = 0, j = 0; i < k->n; i++) {
		if (!pin[i])
			continue;
		k->pin_order[j++] = i;
		k->seen[i] |= SEEN_PIN;
	}
	shuffle(k, k->pin_order, k->npin);
	pr_info("breakpoints: %zu pinned sites of %zu: register 0 cycles over them\n", k->npin,
		k->n);
	return 0;
}

static int start_movers(struct kbp *k)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&k->lock, NULL);
	k->sync = true;
	k->regs = k->nregs;
	k->t0_ns = clock__now_ns();
	k->min_period_us = k->max_period_us = k->o.period_us;
	k->min_regs = k->nregs;
	for (unsigned int c = 0; c < k->ncpus; c++) {
		if (k->cpu[c].online && !k->lead)
			k->lead = &k->cpu[c];
	}
	for (unsigned int c = 0; c < k->ncpus; c++) {
		int err;

		if (!k->cpu[c].online)
			continue;
		err = pthread_create(&k->cpu[c].mover, NULL, mover, &k->cpu[c]);
		if (err)
			return -err;
		k->cpu[c].started = true;
	}
	return 0;
}

/* By function start, then by index: a function's sites together, in their order. */
static int by_fn(const void *a, const void *b, void *arg)
{
	const struct kbp_fn *fn = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (fn[x].start != fn[y].start)
		return fn[x].start < fn[y].start ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The functions of the evidence, from each site's (none when fn is NULL); -ENOMEM. */
static int index_functions(struct kbp *k, const struct kbp_fn *fn)
{
	if (!fn)
		return 0;
	k->fns = malloc(k->n * sizeof(*k->fns));
	k->fid = malloc(k->n * sizeof(*k->fid));
	k->byfn = malloc(k->n * sizeof(*k->byfn));
	k->fwarm = calloc(k->n, 1);
	if (!k->fns || !k->fid || !k->byfn || !k->fwarm)
		return -ENOMEM;
	for (size_t i = 0; i < k->n; i++)
		k->byfn[i] = i;
	qsort_r(k->byfn, k->n, sizeof(*k->byfn), by_fn, (void *)fn);
	for (size_t j = 0; j < k->n; j++) {
		uint32_t i = k->byfn[j];

		if (!k->nfns || fn[i].start != k->fns[k->nfns - 1].start)
			k->fns[k->nfns++] = (struct kbp_fnrec){ .start = fn[i].start,
								.end = fn[i].end, .first = j };
		k->fns[k->nfns - 1].count++;
		k->fid[i] = k->nfns - 1;
	}
	return 0;
}

/*
 * Each online CPU's IP sampler, when there are functions to find; said when
 * there is none: then only the sites' own fires are evidence.
 */
static void open_ips(struct kbp *k)
{
	int err = 0, opened = 0;

	if (!k->fns)
		return;
	for (unsigned int c = 0; c < k->ncpus; c++) {
		int e = k->cpu[c].online ? kip__open(&k->cpu[c].ip, k->cpu[c].cpu, KBP_IP_HZ) : 0;

		opened += k->cpu[c].online && !e;
		err = e ? e : err;
	}
	if (err)
		pr_warn("breakpoints: no cpu-clock sampler of kernel IPs on %s CPU: %s (placements "
			"follow the sites' own fires only there)\n", opened ? "some" : "any",
			strerror(-err));
}

int kbp__new(struct kcsand_bpf *skel, const uint64_t *addr, const uint32_t *site,
	     const struct kbp_fn *fn, size_t n, const struct kbp_opts *o, struct kbp **out)
{
	struct kbp *k = calloc(1, sizeof(*k));
	int err;

	if (!k)
		return -ENOMEM;
	k->skel = skel;
	k->o = *o;
	k->n = n;
	k->addr = malloc(n * sizeof(*k->addr));
	k->site = malloc(n * sizeof(*k->site));
	k->order = malloc(n * sizeof(*k->order));
	k->seen = calloc(n, 1);
	k->misses = calloc(n, 1);
	k->warm = malloc(n * sizeof(*k->warm));
	k->live = malloc(n * sizeof(*k->live));
	k->hot = malloc(n * sizeof(*k->hot));
	if (!n || !k->addr || !k->site || !k->order || !k->seen || !k->misses || !k->warm ||
	    !k->live || !k->hot || !o->period_us || index_functions(k, fn)) {
		kbp__free(k);
		return n ? -ENOMEM : -ENOENT;
	}
	memcpy(k->addr, addr, n * sizeof(*addr));
	memcpy(k->site, site, n * sizeof(*site));
	for (size_t i = 0; i < n; i++)
		k->order[i] = i;
	k->seed = o->seed;
	k->period_ns = o->period_us * 1000ull;	/* before open_regs: the slots' check spread */
	shuffle(k, k->order, k->n);
	err = pin_sites(k, o->pin);
	if (!err)
		err = all_cpus(k);
	if (!err)
		err = open_regs(k);
	/* After open_regs (it sets attr); a fixed period has no budget to serve. */
	if (!err && o->budget > 0)
		k->trap_ns = calibrate_trap(k);
	if (err) {
		pr_warn("breakpoints: cannot open an execute breakpoint on each CPU: %s%s\n",
			strerror(-err), err == -ENOSPC ? " (no free debug register)" : "");
		kbp__free(k);
		return err;
	}
	open_ips(k);
	err = start_movers(k);
	if (err) {
		pr_warn("breakpoints: cannot start a mover thread: %s\n", strerror(-err));
		kbp__free(k);
		return err;
	}
	*out = k;
	return 0;
}

void kbp__stats(const struct kbp *k, struct kbp_stats *st)
{
	uint64_t ns;

	memset(st, 0, sizeof(*st));
	slots_sum(k, &st->hits, &st->checked, &ns);
	st->sites = k->n;
	st->sampled = k->sampled;
	st->refused = k->refused;
	st->nregs = k->nregs;
	st->cycles = k->passes;
	st->ran = k->tally.ran;
	st->checked_sites = k->tally.checked;
	st->placements = k->tally.placements;
	st->fired = k->tally.fired;
	st->timeouts = k->tally.timeouts;
	st->capped = k->tally.capped;
	st->period_us = k->period_ns / 1000;	/* one word, read without the lock */
	st->min_period_us = k->min_period_us;
	st->max_period_us = k->max_period_us;
	st->min_regs = k->min_regs;
	st->trap_ns = k->trap_ns;
	st->overhead = k->overhead_ppm / 1e6;
	st->elapsed_ns = clock__now_ns() - k->t0_ns;
	for (unsigned int c = 0; c < k->ncpus; c++) {
		st->retargets += k->cpu[c].moves;
		st->retarget_ns += k->cpu[c].move_ns;
		st->movers_cpu_ns += k->cpu[c].cpu_ns;
		st->pinned += k->cpu[c].pinned && k->cpu[c].online;
		st->ncpus += k->cpu[c].online;
	}
}

/*
 * Join CPU c's mover, which closes the CPU's events on its way out, within
 * KBP_STOP_MS; false, said, when it has not ended: its CPU has not run it
 * (a CPU that takes no interrupt wakes no thread), and the events stay
 * open, the IPI a close from here would send unanswered.
 */
static bool join_mover(struct kbp_cpu *c)
{
	if (!c->started)
		return true;
	if (thread__join_within(c->mover, KBP_STOP_MS)) {
		pr_warn("breakpoints: CPU %d's mover has not stopped in %u ms: CPU %d may not be "
			"taking interrupts; its breakpoints are left open (the kernel log may "
			"say more)\n", c->cpu, KBP_STOP_MS, c->cpu);
		return false;
	}
	c->started = false;
	return true;
}

/* Stop the movers; false when one has not (kbp__free() then leaves k to it). */
static bool stop_movers(struct kbp *k)
{
	bool all = true;

	if (k->sync) {
		pthread_mutex_lock(&k->lock);
		k->stop = true;
		pthread_cond_broadcast(&k->wake);
		pthread_mutex_unlock(&k->lock);
	}
	/* The lead first: its hotplug scan starts and stops the others. */
	if (k->lead && !join_mover(k->lead))
		return false;
	for (unsigned int c = 0; c < k->ncpus; c++)
		all &= join_mover(&k->cpu[c]);
	return all;
}

void kbp__free(struct kbp *k)
{
	unsigned int local = 0, remote = 0;

	if (!k)
		return;
	if (!stop_movers(k))
		return;		/* a mover still runs and reads k: left, not freed */
	/* The movers are gone: the tally is still. */
	if (k->lead)
		print_coverage(k, "at the end");
	/* What a mover did not close on its CPU (not pinned, or never started). */
	for (unsigned int c = 0; c < k->ncpus; c++) {
		struct kbp_cpu *kc = &k->cpu[c];

		local += kc->released;
		remote += !kc->released && kc->fd[0] >= 0;
		if (!kc->released)
			close_cpu_events(kc);
	}
	pr_info("breakpoints: teardown: %u CPUs' events closed on their own CPU, %u from "
		"another (an IPI each)\n", local, remote);
	free(k->addr);
	free(k->site);
	free(k->order);
	free(k->pin_order);
	free(k->seen);
	free(k->misses);
	free(k->fns);
	free(k->fid);
	free(k->byfn);
	free(k->fwarm);
	free(k->warm);
	free(k->live);
	free(k->hot);
	if (k->sync) {
		pthread_cond_destroy(&k->wake);
		pthread_mutex_destroy(&k->lock);
	}
	free(k);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Code-breakpoint sampling in kernel mode.  See kbp.h.
 *
 * A register's move re-targets its event with PERF_EVENT_IOC_MODIFY_ATTRIBUTES:
 * the kernel disables the event on its CPU, changes the address and enables
 * it again.  Done from another CPU, that is an IPI to the event's CPU and a
 * wait for it, which on a busy (or emulated) machine takes milliseconds
 * (docs/kernel-mode.md).  So each CPU has a mover thread of its own, pinned
 * to it and woken by its own timer: its moves are local calls, with no IPI.
 *
 * The movers share one schedule and nothing else: step s (the period
 * number, from the clock) puts register r < regs on site
 * order[(pos + r) % n] on every CPU, pos advancing by regs a step, so all
 * CPUs break on the same sites at about the same time, as a race between
 * two runs of the same code needs.  The BPF side learns a CPU's new site
 * first (kxbp_slots[cpu][r]); a trap still at the old address in between no
 * longer matches and is dropped.
 *
 * The budget.  Once a second the first CPU's mover measures what sampling
 * cost (the moves, the checks' BPF time with their stalls, and the traps,
 * at the cost calibrated at start) against the machine's own CPU time
 * (ksampler.h's kcpu), and kbp_policy__next() sets the period and the
 * registers in use; the schedule is re-based at the current step so that the
 * cycle goes on where it was.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
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
#include "ksampler.h"
#include "kcsand.h"
#include "kcsand.skel.h"
#include "util/clock.h"
#include "util/print.h"

#define KBP_MAX_CPUS	KCSAND_KXBP_MAX_CPUS
/* Sites tried in a row when the kernel refuses addresses, before a register waits a period. */
#define KBP_MAX_TRIES	16

/* One CPU: its events, one per register, and the thread that moves them. */
struct kbp_cpu {
	struct kbp *k;
	int cpu;
	int fd[KCSAND_KXBP_SLOTS];
	struct bpf_link *link[KCSAND_KXBP_SLOTS];
	pthread_t mover;
	bool started;
	bool online;			/* at start, then as the hotplug scan saw it */
	_Atomic bool down;		/* went offline: its mover stops */
	bool pinned;			/* the mover runs on this CPU: local moves */
	bool parked[KCSAND_KXBP_SLOTS];	/* disabled: the budget took the register away */
	_Atomic uint64_t moves, move_ns;	/* written by the mover, read for stats */
};

/* Where the cycle is: step s starts at t_base + (s - s_base) * period_ns, at pos_base + (s - s_base) * regs. */
struct kbp_sched {
	uint64_t t_base, s_base, pos_base, period_ns;
	unsigned int regs;
};

/* The budget's view of the last interval (the first CPU's mover only). */
struct kbp_control {
	struct kcpu cpu;
	uint64_t t_ns, hits, checked, bpf_ns, move_ns;
	bool primed;
};

struct kbp {
	struct kcsand_bpf *skel;
	struct kbp_opts o;
	uint64_t *addr;
	uint32_t *site;
	uint32_t *order;		/* the shuffled cycle */
	_Atomic uint8_t *seen;		/* bit 0: sampled, bit 1: refused */
	size_t n;
	struct perf_event_attr attr;	/* as opened: MODIFY_ATTRIBUTES wants it unchanged but bp_addr */
	struct kbp_cpu cpu[KBP_MAX_CPUS];	/* every CPU the machine may bring online */
	struct kbp_cpu *lead;		/* its mover runs the budget and the hotplug scan */
	uint64_t hotplug_ns;		/* the last scan (the lead's mover only) */
	unsigned int ncpus, nregs;
	struct kbp_sched sched;		/* under lock */
	struct kbp_control ctl;
	double trap_ns;
	_Atomic unsigned int min_period_us, max_period_us, min_regs;
	_Atomic uint64_t overhead_ppm;	/* the last interval's share */
	_Atomic uint64_t last_pos;	/* the furthest cycle position a mover reached */
	_Atomic size_t sampled, refused;
	_Atomic uint64_t old_hits, old_checks, old_ns;	/* of the slots' earlier sites */
	pthread_mutex_t lock;		/* with wake: the schedule, and stop sleeping movers */
	pthread_cond_t wake;
	bool sync;			/* lock and wake initialized */
	bool stop;
};

static void shuffle(struct kbp *k)
{
	unsigned int seed = k->o.seed;

	for (size_t i = 0; i < k->n; i++)
		k->order[i] = i;
	for (size_t i = k->n - 1; i > 0; i--) {
		size_t j = ((size_t)rand_r(&seed) << 16 ^ rand_r(&seed)) % (i + 1);
		uint32_t t = k->order[i];

		k->order[i] = k->order[j];
		k->order[j] = t;
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
	}
	return up ? 0 : -ENODEV;
}

static void count_sampled(struct kbp *k, size_t i)
{
	if (!(atomic_fetch_or(&k->seen[i], 1) & 1))
		k->sampled++;
}

static void refuse(struct kbp *k, size_t i, int err)
{
	if (atomic_fetch_or(&k->seen[i], 2) & 2)
		return;
	k->refused++;
	if (k->o.verbose)
		pr_info("breakpoints: the kernel refuses an execute breakpoint at 0x%llx: %s\n",
			(unsigned long long)k->addr[i], strerror(-err));
}

/* The BPF side's slot of register r on CPU c: which site it samples. */
static int set_slot(struct kbp *k, const struct kbp_cpu *c, unsigned int r, size_t i)
{
	struct kcsand_kxbp_slot s = { .ip = k->addr[i], .site = k->site[i] };
	__u32 key = (__u32)c->cpu * KCSAND_KXBP_SLOTS + r;
	int fd = bpf_map__fd(k->skel->maps.kxbp_slots);

	if (!bpf_map_lookup_elem(fd, &key, &s)) {
		k->old_hits += s.hits;
		k->old_checks += s.checks;
		k->old_ns += s.ns;
	}
	s = (struct kcsand_kxbp_slot){ .ip = k->addr[i], .site = k->site[i] };
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

/*
 * The first site the kernel has not refused at pos, pos + stride, ... of
 * the cycle, or -1.
 */
static long site_at(const struct kbp *k, uint64_t pos, unsigned int stride, int tries)
{
	for (int t = 0; t < tries; t++, pos += stride) {
		uint32_t i = k->order[pos % k->n];

		if (!(k->seen[i] & 2))
			return i;
	}
	return -1;
}

/* Move register r of CPU c to its site at cycle position pos, of regs in use. */
static void move(struct kbp *k, struct kbp_cpu *c, unsigned int r, uint64_t pos,
		 unsigned int regs)
{
	for (int tries = 0; tries < KBP_MAX_TRIES; tries++) {
		long i = site_at(k, pos + r, regs, KBP_MAX_TRIES);
		struct perf_event_attr attr = k->attr;
		uint64_t t = clock__now_ns();

		if (i < 0)
			return;
		set_slot(k, c, r, i);
		attr.bp_addr = k->addr[i];
		if (!ioctl(c->fd[r], PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &attr)) {
			/*
			 * The move enabled a parked event again (the kernel
			 * does unless attr.disabled); say it, not rely on it.
			 */
			if (c->parked[r] && !ioctl(c->fd[r], PERF_EVENT_IOC_ENABLE, 0))
				c->parked[r] = false;
			c->move_ns += clock__now_ns() - t;
			c->moves++;
			count_sampled(k, i);
			return;
		}
		refuse(k, i, -errno);
	}
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

static void note_plan(struct kbp *k, const struct kbp_sched *sc)
{
	unsigned int us = sc->period_ns / 1000;

	if (us < k->min_period_us)
		k->min_period_us = us;
	if (us > k->max_period_us)
		k->max_period_us = us;
	if (sc->regs < k->min_regs)
		k->min_regs = sc->regs;
}

/*
 * Once a second, from the first CPU's mover: the last interval's cost
 * against the machine's own time, and the period and registers for the
 * next.  The schedule is re-based at step s, which starts at t_s.
 */
static void control(struct kbp *k, uint64_t now, uint64_t s)
{
	struct kbp_control *ctl = &k->ctl;
	uint64_t hits, checked, bpf_ns, move_ns = 0;
	double native, probes, cost, share;
	struct kbp_plan p;

	if (ctl->primed && now - ctl->t_ns < KBP_CONTROL_NS)
		return;
	slots_sum(k, &hits, &checked, &bpf_ns);
	for (unsigned int c = 0; c < k->ncpus; c++)
		move_ns += k->cpu[c].move_ns;
	native = kcpu__delta_ns(&ctl->cpu);	/* the machine's, less kcsand's (the moves) */
	if (!ctl->primed || native < 0) {
		ctl->primed = native >= 0;
		goto out;
	}
	/* The probes ran in the machine's time: take them out of "native". */
	probes = (double)(bpf_ns - ctl->bpf_ns) + (double)(hits - ctl->hits) * k->trap_ns;
	cost = probes + (double)(move_ns - ctl->move_ns);
	native = native > probes ? native - probes : 0;
	share = native > 0 ? cost / native : cost > 0 ? 1e9 : 0;
	k->overhead_ppm = share < 1e6 ? (uint64_t)(share * 1e6) : (uint64_t)1e12;
	pthread_mutex_lock(&k->lock);
	p = (struct kbp_plan){ .period_us = k->sched.period_ns / 1000, .regs = k->sched.regs };
	kbp_policy__next(&p, share, k->o.budget, k->nregs, KBP_MIN_PERIOD_US, KBP_MAX_PERIOD_US);
	if (p.period_us * 1000ull != k->sched.period_ns || p.regs != k->sched.regs) {
		struct kbp_sched *sc = &k->sched;

		sc->t_base += (s - sc->s_base) * sc->period_ns;
		sc->pos_base += (s - sc->s_base) * sc->regs;
		sc->s_base = s;
		sc->period_ns = p.period_us * 1000ull;
		sc->regs = p.regs;
		note_plan(k, sc);
		pthread_cond_broadcast(&k->wake);	/* the others wait for a step that moved */
		if (k->o.verbose > 1)
			pr_debug("breakpoints: cost %.1f%% of the machine's own time: period %u us, "
				"%u registers\n", share * 100, p.period_us, p.regs);
	}
	pthread_mutex_unlock(&k->lock);
out:
	ctl->t_ns = now;
	ctl->hits = hits;
	ctl->checked = checked;
	ctl->bpf_ns = bpf_ns;
	ctl->move_ns = move_ns;
}

/*
 * Pinned to its CPU, so that its moves are local calls, and real-time
 * (SCHED_FIFO, the lowest priority): a mover starved by the workload would
 * leave its registers on sites that may be hot, and the budget (the lead's
 * mover) unenforced.  Either failure is said: moves then cost an IPI, or
 * wait for the workload.
 */
static void mover_setup(struct kbp_cpu *c)
{
	struct sched_param sp = { .sched_priority = 1 };
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	c->pinned = !err;
	if (err)
		pr_warn("breakpoints: cannot pin CPU %d's mover to it: %s (its moves are IPIs "
			"from another CPU)\n", c->cpu, strerror(err));
	err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err && c == c->k->lead)
		pr_warn("breakpoints: cannot make the movers real-time: %s (a busy machine may "
			"delay moves and the budget)\n", strerror(err));
}

static void *mover(void *arg);

/* CPU c came online: its registers at the cycle's current sites, and a mover. */
static int cpu_up(struct kbp *k, struct kbp_cpu *c)
{
	uint64_t pos = atomic_load(&k->last_pos);
	int err = 0;

	for (unsigned int r = 0; r < k->nregs && !err; r++) {
		long i = site_at(k, pos + r, 1, KBP_MAX_TRIES);

		err = i < 0 ? -ENOENT : open_event(k, c, r, i);
	}
	c->down = false;
	if (!err)
		err = -pthread_create(&c->mover, NULL, mover, c);
	if (err) {
		for (unsigned int r = 0; r < KCSAND_KXBP_SLOTS; r++)
			close_event(c, r);
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
	for (unsigned int r = 0; r < KCSAND_KXBP_SLOTS; r++)
		close_event(c, r);
	pr_warn("breakpoints: CPU %d went offline\n", c->cpu);
}

/*
 * Once a second, from the lead's mover: CPUs brought online since are
 * sampled, and those taken offline let go (their events would stay off, and
 * their movers unpinned, when they came back).  The lead's own CPU is not
 * scanned: its mover does the scan.
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

/*
 * A CPU's mover: at each step's time, every register in use to its site,
 * the others parked.  A mover that wakes late skips to the current step,
 * so that the CPUs stay on the same sites; a site it skipped was sampled on
 * the CPUs that were on time.
 */
static void *mover(void *arg)
{
	struct kbp_cpu *c = arg;
	struct kbp *k = c->k;
	uint64_t next = 1;	/* the step this mover waits for */

	mover_setup(c);
	for (;;) {
		struct kbp_sched sc;
		uint64_t t, s, pos;
		bool stop;

		pthread_mutex_lock(&k->lock);
		for (;;) {
			uint64_t due;
			struct timespec ts;

			sc = k->sched;
			if (next < sc.s_base)
				next = sc.s_base;
			due = sc.t_base + (next - sc.s_base) * sc.period_ns;
			t = clock__now_ns();
			if (k->stop || c->down || t >= due)
				break;
			ts = (struct timespec){ .tv_sec = due / 1000000000ull,
						.tv_nsec = due % 1000000000ull };
			pthread_cond_timedwait(&k->wake, &k->lock, &ts);
		}
		stop = k->stop || c->down;
		pthread_mutex_unlock(&k->lock);
		if (stop)
			break;
		s = sc.s_base + (t - sc.t_base) / sc.period_ns;
		pos = sc.pos_base + (s - sc.s_base) * sc.regs;
		for (unsigned int r = 0; r < k->nregs; r++) {
			if (r < sc.regs)
				move(k, c, r, pos, sc.regs);
			else
				park(c, r);
		}
		if (pos + sc.regs > atomic_load(&k->last_pos))
			atomic_store(&k->last_pos, pos + sc.regs);
		if (c == k->lead && k->o.budget > 0)
			control(k, t, s);
		if (c == k->lead)
			scan_hotplug(k, t);
		next = s + 1;
	}
	return NULL;
}

/* Open register r on every CPU, at its step-0 site; -errno when the CPUs have none free. */
static int open_reg(struct kbp *k, unsigned int r)
{
	for (int tries = 0; tries < KBP_MAX_TRIES; tries++) {
		long i = site_at(k, r, 1, KBP_MAX_TRIES);
		int err = i < 0 ? -ENOENT : 0;

		for (unsigned int c = 0; c < k->ncpus && !err; c++)
			if (k->cpu[c].online)
				err = open_event(k, &k->cpu[c], r, i);
		if (!err) {
			count_sampled(k, i);
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
	if (k->o.verbose)
		pr_info("breakpoints: a trap costs %.0f ns (getppid(2): %.0f ns without, %.0f "
			"with)\n", with > without ? with - without : 0, without, with);
	return with > without ? with - without : 0;
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
	k->sched = (struct kbp_sched){ .t_base = clock__now_ns(), .pos_base = 0,
				       .period_ns = k->o.period_us * 1000ull, .regs = k->nregs };
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

int kbp__new(struct kcsand_bpf *skel, const uint64_t *addr, const uint32_t *site, size_t n,
	     const struct kbp_opts *o, struct kbp **out)
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
	if (!n || !k->addr || !k->site || !k->order || !k->seen || !o->period_us) {
		kbp__free(k);
		return n ? -ENOMEM : -ENOENT;
	}
	memcpy(k->addr, addr, n * sizeof(*addr));
	memcpy(k->site, site, n * sizeof(*site));
	shuffle(k);
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
	st->cycles = atomic_load(&k->last_pos) / k->n;
	st->period_us = k->sched.period_ns / 1000;	/* one word, read without the lock */
	st->min_period_us = k->min_period_us;
	st->max_period_us = k->max_period_us;
	st->min_regs = k->min_regs;
	st->trap_ns = k->trap_ns;
	st->overhead = k->overhead_ppm / 1e6;
	for (unsigned int c = 0; c < k->ncpus; c++) {
		st->retargets += k->cpu[c].moves;
		st->retarget_ns += k->cpu[c].move_ns;
		st->pinned += k->cpu[c].pinned && k->cpu[c].online;
		st->ncpus += k->cpu[c].online;
	}
}

void kbp__free(struct kbp *k)
{
	if (!k)
		return;
	if (k->sync) {
		pthread_mutex_lock(&k->lock);
		k->stop = true;
		pthread_cond_broadcast(&k->wake);
		pthread_mutex_unlock(&k->lock);
	}
	/* The lead first: its hotplug scan starts and stops the others. */
	if (k->lead && k->lead->started) {
		pthread_join(k->lead->mover, NULL);
		k->lead->started = false;
	}
	for (unsigned int c = 0; c < k->ncpus; c++) {
		/* Joined first: a mover must not move an event being closed. */
		if (k->cpu[c].started)
			pthread_join(k->cpu[c].mover, NULL);
		for (unsigned int r = 0; r < KCSAND_KXBP_SLOTS; r++)
			close_event(&k->cpu[c], r);
	}
	free(k->addr);
	free(k->site);
	free(k->order);
	free(k->seen);
	if (k->sync) {
		pthread_cond_destroy(&k->wake);
		pthread_mutex_destroy(&k->lock);
	}
	free(k);
}

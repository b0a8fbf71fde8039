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
 * The movers need no lock between them: step s of the cycle (the period
 * number since the start, from the clock) puts register r on site
 * order[(s * nregs + r) % n] on every CPU, so all CPUs break on the same
 * sites at about the same time, as a race between two runs of the same code
 * needs.  The BPF side learns a CPU's new site first (kxbp_slots[cpu][r]); a
 * trap still at the old address in between no longer matches and is dropped.
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
	bool pinned;			/* the mover runs on this CPU: local moves */
	uint64_t moves, move_ns;	/* written by the mover, read for stats */
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
	struct kbp_cpu cpu[KBP_MAX_CPUS];
	unsigned int ncpus, nregs;
	uint64_t t0_ns;			/* step 0 */
	_Atomic uint64_t last_step;	/* the furthest step a mover reached */
	_Atomic size_t sampled, refused;
	_Atomic uint64_t old_hits;	/* of the slots' earlier sites */
	pthread_mutex_t lock;		/* with wake: stop sleeping movers */
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

static int online_cpus(struct kbp *k)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	for (long c = 0; c < n && c < KBP_MAX_CPUS; c++) {
		char path[64];

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/online", c);
		if (c && !access(path, R_OK)) {
			FILE *f = fopen(path, "re");
			int on = 1;

			if (f) {
				if (fscanf(f, "%d", &on) != 1)
					on = 1;
				fclose(f);
			}
			if (!on)
				continue;
		}
		k->cpu[k->ncpus].k = k;
		k->cpu[k->ncpus].cpu = (int)c;
		memset(k->cpu[k->ncpus].fd, -1, sizeof(k->cpu[k->ncpus].fd));
		k->ncpus++;
	}
	return k->ncpus ? 0 : -ENODEV;
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

	if (!bpf_map_lookup_elem(fd, &key, &s) && s.hits)
		k->old_hits += s.hits;
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

/* Move register r of CPU c to its site at step s. */
static void move(struct kbp *k, struct kbp_cpu *c, unsigned int r, uint64_t s)
{
	for (int tries = 0; tries < KBP_MAX_TRIES; tries++) {
		long i = site_at(k, s * k->nregs + r, k->nregs, KBP_MAX_TRIES);
		struct perf_event_attr attr = k->attr;
		uint64_t t = clock__now_ns();

		if (i < 0)
			return;
		set_slot(k, c, r, i);
		attr.bp_addr = k->addr[i];
		if (!ioctl(c->fd[r], PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &attr)) {
			c->move_ns += clock__now_ns() - t;
			c->moves++;
			count_sampled(k, i);
			return;
		}
		refuse(k, i, -errno);
	}
}

/*
 * A CPU's mover: at each step's time, every register to its site.  A mover
 * that wakes late skips to the current step, so that the CPUs stay on the
 * same sites; a site it skipped was sampled on the CPUs that were on time.
 */
static void *mover(void *arg)
{
	struct kbp_cpu *c = arg;
	struct kbp *k = c->k;
	uint64_t period = k->o.period_us * 1000ull, s = 1;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	c->pinned = !pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (;;) {
		uint64_t due = k->t0_ns + s * period, t;
		struct timespec ts = { .tv_sec = due / 1000000000ull, .tv_nsec = due % 1000000000ull };
		bool stop;

		pthread_mutex_lock(&k->lock);
		while (!k->stop && (t = clock__now_ns()) < due)
			pthread_cond_timedwait(&k->wake, &k->lock, &ts);
		stop = k->stop;
		pthread_mutex_unlock(&k->lock);
		if (stop)
			break;
		s = (t - k->t0_ns) / period;
		for (unsigned int r = 0; r < k->nregs; r++)
			move(k, c, r, s);
		if (s > atomic_load(&k->last_step))
			atomic_store(&k->last_step, s);
		s++;
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

static int start_movers(struct kbp *k)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&k->lock, NULL);
	k->sync = true;
	k->t0_ns = clock__now_ns();
	for (unsigned int c = 0; c < k->ncpus; c++) {
		int err = pthread_create(&k->cpu[c].mover, NULL, mover, &k->cpu[c]);

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
	err = online_cpus(k);
	if (!err)
		err = open_regs(k);
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
	struct kcsand_kxbp_slot s;
	int fd = bpf_map__fd(k->skel->maps.kxbp_slots);

	memset(st, 0, sizeof(*st));
	st->hits = k->old_hits;
	st->sites = k->n;
	st->sampled = k->sampled;
	st->refused = k->refused;
	st->nregs = k->nregs;
	st->ncpus = k->ncpus;
	st->cycles = (atomic_load(&k->last_step) + 1) * k->nregs / k->n;
	for (unsigned int c = 0; c < k->ncpus; c++) {
		st->retargets += k->cpu[c].moves;
		st->retarget_ns += k->cpu[c].move_ns;
		st->pinned += k->cpu[c].pinned;
		for (__u32 r = 0; r < k->nregs; r++) {
			__u32 key = (__u32)k->cpu[c].cpu * KCSAND_KXBP_SLOTS + r;

			if (!bpf_map_lookup_elem(fd, &key, &s))
				st->hits += s.hits;
		}
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

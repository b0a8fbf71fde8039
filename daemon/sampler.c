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
 * Kernel mode (not measured yet: no kprobes on this VM) is expected to keep
 * its kprobes attached and flip the BPF-side armed bitmap instead
 * (sampler__prepare's use_bitmap), because unregistering kprobes waits for
 * RCU grace periods per probe; an unarmed kprobe still costs its trap, so
 * the load model must then count trap_ns for unarmed hits too.
 *
 * A warm-up period (sampler_warmup_ms) arms everything first: short runs,
 * such as the test scenarios, whose native run time is a few milliseconds,
 * would otherwise be over before any hot site had its turn.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine.h"
#include "sampler.h"
#include "uprobe_multi.h"
#include "kcsand.skel.h"

extern int kcsand_verbose;

#define CALIB_CALLS	500
#define MAX_PIDS	256

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
	double *load;			/* per site, CPU-s/s when armed */
	bool *known;
	uint8_t *armed;			/* the set attached now */
	uint8_t *next;
	uint64_t *prev_hits, *prev_ns;

	struct pid_cpu pids[MAX_PIDS];
	size_t nr_pids;
	uint64_t start_ns, last_ns;
	uint64_t rng;
	bool all_armed;
	struct sampler_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

struct by_load {
	double load;
	size_t i;
};

static int cmp_load(const void *a, const void *b)
{
	const struct by_load *x = a, *y = b;

	return x->load < y->load ? -1 : x->load > y->load;
}

double sampler_choose(const double *load, const bool *known, size_t n, double max_load,
		      uint64_t *rng, uint8_t *armed)
{
	struct by_load *v = calloc(n ? n : 1, sizeof(*v));
	double cold = 0, hot = 0, sum = 0, p;
	size_t nv = 0, k;

	if (!v) {
		memset(armed, 1, n);
		return INFINITY;
	}
	for (size_t i = 0; i < n; i++) {
		if (!known[i]) {
			armed[i] = 1;	/* unmeasured: arm it to learn its load */
			continue;
		}
		v[nv++] = (struct by_load){ load[i], i };
	}
	qsort(v, nv, sizeof(*v), cmp_load);
	/* Cold sites: the cheapest, while they fit half the budget.  Free ones always. */
	for (k = 0; k < nv; k++) {
		if (v[k].load > 0 && cold + v[k].load > max_load / 2)
			break;
		cold += v[k].load;
		armed[v[k].i] = 1;
	}
	for (size_t j = k; j < nv; j++)
		hot += v[j].load;
	/* Hot sites take turns: each is armed with the probability that fills the rest. */
	p = hot > 0 ? (max_load - cold) / hot : 0;
	if (p > 1)
		p = 1;
	if (p < 0)
		p = 0;
	sum = cold;
	for (size_t j = k; j < nv; j++) {
		double r = (xorshift(rng) >> 11) * (1.0 / 9007199254740992.0);

		armed[v[j].i] = r < p;
		if (armed[v[j].i])
			sum += v[j].load;
	}
	free(v);
	return sum;
}

int sampler__prepare(struct kcsand_bpf *skel, size_t capacity, bool use_bitmap)
{
	int ncpu = libbpf_num_possible_cpus();

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	skel->rodata->sampler_capacity = capacity;
	skel->rodata->sampler_use_bitmap = use_bitmap;
	bpf_map__set_max_entries(skel->maps.site_stats, (size_t)ncpu * capacity);
	bpf_map__set_max_entries(skel->maps.armed_bitmap, (capacity + 63) / 64);
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
#define GROW(p) do { void *q = realloc(p, n * sizeof(*(p))); if (!q) return -ENOMEM; p = q; } while (0)
	GROW(s->load);
	GROW(s->known);
	GROW(s->armed);
	GROW(s->next);
	GROW(s->prev_hits);
	GROW(s->prev_ns);
#undef GROW
	for (size_t i = old; i < n; i++) {
		s->load[i] = 0;
		s->known[i] = false;
		s->armed[i] = 1;	/* objects are attached whole */
		s->prev_hits[i] = s->prev_ns[i] = 0;
	}
	s->n = n;
	return 0;
}

int sampler__new(struct engine *e, struct kcsand_bpf *skel, size_t capacity, bool multi,
		 struct sampler **out)
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
	s->stats_len = ((size_t)s->nr_cpus * capacity * sizeof(struct kcsand_site_stat) + page - 1) &
		       ~(page - 1);
	m = mmap(NULL, s->stats_len, PROT_READ, MAP_SHARED, bpf_map__fd(skel->maps.site_stats), 0);
	if (m == MAP_FAILED) {
		int err = -errno;

		fprintf(stderr, "kcsand: sampler: cannot map the site statistics: %s\n",
			strerror(-err));
		free(s);
		return err;
	}
	s->stats = m;
	s->st.trap_ns = calibrate_trap_ns(skel, multi);
	s->rng = now_ns() | 1;
	s->start_ns = s->last_ns = now_ns();
	s->all_armed = true;
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
		/* After "comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
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

void sampler__tick(struct sampler *s)
{
	unsigned int budget = 100, warmup = 0, period = 500;
	uint64_t now = now_ns(), dt, ticks;
	double probe = 0, u, native, max_load, est;
	size_t n = engine__nr_cookies(s->e), armed = 0;
	long hz = sysconf(_SC_CLK_TCK);

	engine__get_param(s->e, "overhead_budget", &budget);
	engine__get_param(s->e, "sampler_warmup_ms", &warmup);
	engine__get_param(s->e, "sampler_period_ms", &period);
	if (now - s->last_ns < (uint64_t)period * 1000000)
		return;
	if (grow(s, n))
		return;
	dt = now - s->last_ns;
	s->last_ns = now;
	ticks = target_ticks_delta(s);

	/* What each armed site cost in the period that ends now. */
	for (size_t i = 0; i < n && i < s->capacity; i++) {
		uint64_t hits = 0, ns = 0;

		for (int c = 0; c < s->nr_cpus; c++) {
			const struct kcsand_site_stat *st = &s->stats[(size_t)c * s->capacity + i];

			hits += *(volatile const __u64 *)&st->hits;
			ns += *(volatile const __u64 *)&st->ns;
		}
		if (s->armed[i]) {
			double l = ((hits - s->prev_hits[i]) * s->st.trap_ns + (ns - s->prev_ns[i])) /
				   dt;

			s->load[i] = s->known[i] ? (s->load[i] + l) / 2 : l;
			s->known[i] = true;
			probe += l;
		}
		s->prev_hits[i] = hits;
		s->prev_ns[i] = ns;
	}
	u = hz > 0 ? (double)ticks / hz * 1e9 / dt : 0;
	if (u < probe)
		u = probe;	/* tick granularity: never less than what the probes took */
	native = u - probe;
	s->st.measured_overhead = probe > 0 ? probe / (native > 1e-3 ? native : 1e-3) : 0;
	s->st.periods++;

	if (budget >= 100 || now - s->start_ns < (uint64_t)warmup * 1000000) {
		memset(s->next, 1, n);
		est = probe;
	} else {
		max_load = u * budget / (100.0 + budget);
		memset(s->next, 0, n);
		est = sampler_choose(s->load, s->known, n, max_load, &s->rng, s->next);
	}
	for (size_t i = 0; i < n; i++)
		armed += s->next[i];
	s->st.armed = armed;
	s->st.total = n;
	s->st.est_overhead = est / (u - est > 1e-3 ? u - est : 1e-3);
	if (!est)
		s->st.est_overhead = 0;

	if (sets_differ(s->armed, s->next, n)) {
		uint64_t t0 = now_ns();

		if (!engine__rearm(s->e, s->next)) {
			memcpy(s->armed, s->next, n);
			s->st.rearms++;
			s->st.rearm_ms = (now_ns() - t0) / 1e6;
		}
	}
	if (kcsand_verbose >= 2)
		fprintf(stderr, "kcsand: sampler: %zu/%zu sites armed, target %.2f CPUs, probes %.2f, "
				"overhead %.0f%% measured, %.0f%% estimated, re-attach %.2f ms\n",
			armed, n, u, probe, s->st.measured_overhead * 100, s->st.est_overhead * 100,
			s->st.rearm_ms);
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
	if (s->stats)
		munmap((void *)s->stats, s->stats_len);
	free(s->load);
	free(s->known);
	free(s->armed);
	free(s->next);
	free(s->prev_hits);
	free(s->prev_ns);
	free(s);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The site sampler in kernel mode: its CPU-time source, its arming
 * mechanism and its trap calibration.  See ksampler.h; sampler.c runs the
 * loop and the policy.
 *
 * Arming.  Kernel mode keeps its kprobes registered and flips a bit of the
 * BPF side's bitmap (bpf/sampler.bpf.h) instead of detaching: unregistering
 * a kprobe waits for an RCU grace period, longer than a sampler period, and
 * PERF_EVENT_IOC_DISABLE on its perf event disarms nothing (the kprobe
 * handler runs the program before it looks at the event's state).  A
 * disarmed hit costs its trap and one map lookup; flipping a bit is a store
 * into the mmapped map (docs/PERFORMANCE.md, "Figures behind the code").
 *
 * So the sampler saves the BPF work and the stalls, not the traps: every
 * hit of a probed site, armed or not, costs a trap, and that is a floor the
 * budget cannot go under.  The budget covers what arming controls (the BPF
 * program's own time, watchpoint stalls included); the floor is estimated
 * from every site's hits times the calibrated trap cost and reported beside
 * it (trap_floor_pct).  The calibration times an int3 kprobe, the kind a site
 * has when it is registered; the kernel later optimizes many into jumps
 * (CONFIG_OPTPROBES), which trap for less, so the floor is an upper bound,
 * and sampler.c caps it by the machine's measured busy time.  The
 * calibration varies from run to run on a loaded host; that moves the
 * floor, not the budget, which counts only time the BPF program measures
 * itself.
 *
 * CPU time.  There is no target process: "native" is the machine's busy
 * time less kcsand's own and less the probes', from /proc/stat, in clock
 * ticks (10 ms) summed over CPUs.  The tick accounting misses time spent
 * with interrupts off, which a watchpoint's stall is, so the busy time can
 * come out below what the probes measured themselves: sampler.c never lets
 * it go below that.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kcsand.h"
#include "ksampler.h"
#include "kcsand.skel.h"
#include "util/print.h"
#include "util/proc_stat.h"
#include "util/clock.h"


static double now_ns(void)
{
	return (double)clock__now_ns();
}

/* Busy ticks of all CPUs from /proc/stat's first line, or a negative errno. */
static int read_busy_ticks(uint64_t *busy)
{
	unsigned long long v[7] = {};
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -errno;
	/* cpu user nice system idle iowait irq softirq (steal: not this machine's work) */
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
		   &v[5], &v[6]);
	fclose(f);
	if (n != 7)
		return -EINVAL;
	*busy = v[0] + v[1] + v[2] + v[5] + v[6];
	return 0;
}

/* utime + stime of this process, every thread. */
static int read_self_ticks(uint64_t *ticks)
{
	struct proc_stat st;
	int err = proc_stat__read(0, 0, &st);

	if (err)
		return err;
	*ticks = st.utime + st.stime;
	return 0;
}

double kcpu__delta_ns(struct kcpu *c)
{
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t busy = 0, self = 0;
	double d;

	if (hz <= 0 || read_busy_ticks(&busy) || read_self_ticks(&self))
		return -1;
	if (!c->primed) {
		c->busy = busy;
		c->self = self;
		c->primed = true;
		return 0;
	}
	d = (double)(busy - c->busy) - (double)(self - c->self);
	c->busy = busy;
	c->self = self;
	return d > 0 ? d / hz * 1e9 : 0;
}

struct kbitmap {
	volatile uint64_t *w;
	size_t words;
	size_t len;			/* of the mapping */
};

int map_region__open(int fd, size_t bytes, int prot, const char *what, size_t *len, void **out)
{
	size_t page = sysconf(_SC_PAGESIZE);
	void *m;

	*len = (bytes + page - 1) & ~(page - 1);
	m = mmap(NULL, *len, prot, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		int err = -errno;

		pr_warn("sampler: cannot map the %s: %s\n", what, strerror(-err));
		return err;
	}
	*out = m;
	return 0;
}

int kbitmap__open(struct kcsand_bpf *skel, size_t capacity, struct kbitmap **out)
{
	struct kbitmap *b = calloc(1, sizeof(*b));
	void *m;
	int err;

	if (!b)
		return -ENOMEM;
	b->words = (capacity + 63) / 64;
	err = map_region__open(bpf_map__fd(skel->maps.disarmed_bitmap),
			       b->words * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			       "disarmed-sites bitmap", &b->len, &m);
	if (err) {
		free(b);
		return err;
	}
	b->w = m;
	*out = b;
	return 0;
}

uint64_t kbitmap__word(const uint8_t *armed, const uint8_t *turn, size_t n, size_t w)
{
	uint64_t v = 0;

	for (size_t i = w * 64; i < n && i < w * 64 + 64; i++)
		if (!armed[i] && !(turn && turn[i]))
			v |= 1ULL << (i & 63);
	return v;
}

void kbitmap__write(struct kbitmap *b, const uint8_t *armed, const uint8_t *turn, size_t n)
{
	for (size_t w = 0; w < b->words && w * 64 < n; w++) {
		uint64_t v = kbitmap__word(armed, turn, n, w);

		/* One aligned store a word: a hit reads the old word or the new one. */
		if (b->w[w] != v)
			b->w[w] = v;
	}
}

void kbitmap__free(struct kbitmap *b)
{
	if (!b)
		return;
	/*
	 * The run is over and its reports are no longer read: disarm every
	 * site, so that no hit stalls in a check while the kprobes are
	 * unregistered one by one, each after an RCU grace period.
	 */
	for (size_t w = 0; w < b->words; w++)
		b->w[w] = ~0ULL;
	munmap((void *)b->w, b->len);
	free(b);
}

#define TRAP_CALLS	2000
#define TRAP_ROUNDS	3

static void getppid_call(void)
{
	syscall(SYS_getppid);
}

double kcpu__getppid_ns(void)
{
	/* A first round unmeasured: the code and the syscall path warm. */
	clock__least_cpu_ns(getppid_call, TRAP_CALLS, 1);
	return clock__least_cpu_ns(getppid_call, TRAP_CALLS * TRAP_ROUNDS, TRAP_ROUNDS);
}

/* The kprobe PMU's type, or a negative errno. */
static int kprobe_pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/kprobe/type", "r");
	int t = -ENOENT;

	if (f) {
		if (fscanf(f, "%d", &t) != 1)
			t = -EINVAL;
		fclose(f);
	}
	return t;
}

/*
 * A kprobe perf event inside func, where kcsand's sites are: past the
 * 5-byte ftrace call at its entry, or past endbr64 and that call on a
 * kernel with IBT.  An offset that is not an instruction boundary is
 * refused (EILSEQ), so the two are tried in turn.
 */
static int open_inner_kprobe(const char *func)
{
	static const unsigned long offs[] = { 5, 9 };
	int type = kprobe_pmu_type(), fd = -ENOENT;

	if (type < 0)
		return type;
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		struct perf_event_attr a = {
			.size = sizeof(a),
			.type = type,
			.config1 = (unsigned long)func,
			.config2 = offs[i],
		};

		fd = syscall(__NR_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0)
			return fd;
		fd = -errno;
	}
	return fd;
}

/*
 * One timing of a kprobe's trap at FUNC: getppid(2) without the kprobe, then with it
 * running kcsand_kprobe.  0, or a negative errno (said as a warning).
 */
static int time_trap_once(struct kcsand_bpf *skel, const char *func, double *without,
			  double *with)
{
	LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = ~0u);
	struct bpf_link *l;
	int fd;

	*without = kcpu__getppid_ns();
	fd = open_inner_kprobe(func);
	if (fd < 0) {
		pr_warn("sampler: cannot put a kprobe in %s to time a trap (%s): the "
				"trap floor is not counted\n", func, strerror(-fd));
		return fd;
	}
	/* The link owns fd from here on. */
	l = bpf_program__attach_perf_event_opts(skel->progs.kcsand_kprobe, fd, &po);
	if (!l) {
		int err = -errno;

		close(fd);
		pr_warn("sampler: cannot attach to the kprobe in %s to time a trap "
				"(%s): the trap floor is not counted\n", func, strerror(-err));
		return err;
	}
	*with = kcpu__getppid_ns();
	bpf_link__destroy(l);
	return 0;
}

/*
 * Up to TRAP_TRIES timings: a trap never costs nothing, so a timing in which the calls
 * with the kprobe went faster than those without was the machine's noise (a guest
 * whose host descheduled it through the calls without: 3295 ns, then 2580 with, at
 * host load 20), and is taken again.
 */
#define TRAP_TRIES	3

double kcpu__trap_ns(struct kcsand_bpf *skel)
{
	static const char func[] = "__x64_sys_getppid";
	double without = 0, with = 0, t0 = now_ns();
	int tries = 0;

	do {
		if (time_trap_once(skel, func, &without, &with))
			return 0;
	} while (++tries < TRAP_TRIES && with <= without);
	pr_info("sampler: a kprobe trap costs %.0f ns (getppid(2): %.0f ns "
			"without, %.0f with, timing %d of %d); calibrated in %.0f ms\n",
		with > without ? with - without : 0, without, with, tries, TRAP_TRIES,
		(now_ns() - t0) / 1e6);
	return with > without ? with - without : 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The armers of kernel breakpoint mode's data breakpoints.  See pair.h and
 * bpf/pair.bpf.h.
 *
 * An armer sleeps in poll(2) on its CPU's cpu-clock event, whose BPF
 * program lets a sample out (and so wakes it) only while a request it has
 * not acknowledged is pending.  It then reads the request word from the
 * BPF object's .bss, points its CPU's breakpoint event at the address
 * (PERF_EVENT_IOC_MODIFY_ATTRIBUTES, enabled) or turns it off (the
 * watcher is done, or the watcher is on this very CPU, whose own access
 * must not trap on it), and writes the word into pair_ack[cpu]: the
 * watcher, spinning in its stall, sees it and knows the register is live.
 * The ioctl runs on the event's own CPU, so it is a local call with no IPI
 * (as kbp_mover.c's movers), and the armer is real-time above the movers, so
 * that neither the workload nor a move delays an arm.
 *
 * CPU hotplug.  A CPU's events do not survive it going offline (the kernel
 * takes them off its context, and they stay off when it comes back), and
 * its armer is moved off it, unpinned.  So a scanner thread reads the
 * online CPUs once a second: a CPU that went offline stops being waited for
 * (pair_live) and is let go; one brought online, at start or later, gets
 * its register, poll and pinned armer, and is then waited for.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "pair.h"
#include "hwbp.h"
#include "kcsand.skel.h"
#include "util/clock.h"
#include "util/print.h"
#include "util/thread.h"

/* Above the code-breakpoint movers (priority 1): an arm is waited for, a move is not. */
#define ARMER_PRIORITY	2
/* How long pairs__free() waits for an armer woken to stop (its poll also ends each second). */
#define PAIR_STOP_MS	10000

/* One CPU: its pair register, its poll, and the armer. */
struct pair_cpu {
	struct pairs *p;
	int cpu;
	int bp_fd;			/* the data breakpoint */
	int poll_fd;			/* the cpu-clock event that wakes the armer */
	struct bpf_link *bp_link, *poll_link;
	void *ring;			/* poll_fd's mmap: samples to drain */
	pthread_t thread;
	bool started;
	bool up;			/* set up: events open, armer started, live */
	_Atomic bool down;		/* went offline: its armer stops */
	bool armed;			/* the register watches an address now */
	bool released;			/* its armer closed its events, on the CPU, at the stop */
	bool opened_away;		/* its events were opened from another CPU: IPIs */
	uint64_t acked;			/* the last word this armer acknowledged */
	_Atomic uint64_t moves, move_ns, refused;
};

struct pairs {
	struct kcsand_bpf *skel;
	struct perf_event_attr attr;	/* as opened: MODIFY_ATTRIBUTES wants it unchanged but the target */
	struct pair_cpu *cpu;		/* by CPU number, KCSAND_PAIR_MAX_CPUS */
	unsigned int ncpus;		/* up now */
	pthread_t scanner;		/* the hotplug scan */
	bool scanning;
	unsigned int span;		/* the highest CPU number with an armer, + 1 */
	size_t ring_len;
	int stop_fd;			/* an eventfd: written once, wakes every armer to stop */
	_Atomic bool stop;
};

static long perf_open(struct perf_event_attr *attr, int cpu)
{
	return syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The register, kernel-only, off until the first request; its trap runs kcsand_pair_trap. */
static int open_register(struct pairs *p, struct pair_cpu *c)
{
	c->bp_fd = perf_open(&p->attr, c->cpu);
	if (c->bp_fd < 0)
		return -errno;
	c->bp_link = bpf_program__attach_perf_event(p->skel->progs.kcsand_pair_trap, c->bp_fd);
	return c->bp_link ? 0 : -errno;
}

/*
 * The poll: a cpu-clock event, its samples (empty, sample_type 0) let out
 * by kcsand_pair_poll only while a request waits, each one a wake-up.
 */
static int open_poll(struct pairs *p, struct pair_cpu *c)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = KCSAND_PAIR_POLL_NS,
		.wakeup_events = 1,
	};

	c->poll_fd = perf_open(&attr, c->cpu);
	if (c->poll_fd < 0)
		return -errno;
	/* Without a ring, the sample has nowhere to go and wakes nobody. */
	c->ring = mmap(NULL, p->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, c->poll_fd, 0);
	if (c->ring == MAP_FAILED) {
		c->ring = NULL;
		return -errno;
	}
	c->poll_link = bpf_program__attach_perf_event(p->skel->progs.kcsand_pair_poll, c->poll_fd);
	return c->poll_link ? 0 : -errno;
}

/* What poll(2) woke on is read: the ring's samples carry nothing. */
static void drain(struct pair_cpu *c)
{
	struct perf_event_mmap_page *m = c->ring;
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);

	__atomic_store_n(&m->data_tail, head, __ATOMIC_RELEASE);
}

/* Point the register at the word's address, or turn it off; the word to acknowledge. */
static uint64_t retarget(struct pairs *p, struct pair_cpu *c, uint64_t word)
{
	uint64_t addr = word & KCSAND_PAIR_ADDR_MASK, t = clock__now_ns();
	unsigned int owner = (word >> KCSAND_PAIR_CPU_SHIFT) & 0xff;
	struct perf_event_attr attr = p->attr;
	bool on = addr && owner != (unsigned int)c->cpu;

	if (!on && !c->armed)
		return word;
	if (addr & (1ULL << 47))
		addr |= ~KCSAND_PAIR_ADDR_MASK;
	attr.disabled = !on;
	/* Off: back at the idle address it was opened on. */
	if (on) {
		attr.bp_addr = addr;
		attr.bp_len = 1u << ((word >> KCSAND_PAIR_LEN_SHIFT) & 3);
		attr.bp_type = word & KCSAND_PAIR_RW ? HW_BREAKPOINT_RW : HW_BREAKPOINT_W;
	}
	if (ioctl(c->bp_fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &attr)) {
		/* Refused (the CPU entry area, say): off, and the watcher is told not to wait. */
		c->refused++;
		if (c->armed && !ioctl(c->bp_fd, PERF_EVENT_IOC_DISABLE, 0))
			c->armed = false;
		return ~word;
	}
	c->armed = on;
	c->moves++;
	c->move_ns += clock__now_ns() - t;
	return word;
}

/*
 * CPU c's register and poll, closed.  A link's destroy closes its event's
 * fd too (libbpf's perf link): closed again, the number could be another
 * thread's new file by then.
 */
static void close_events(struct pairs *p, struct pair_cpu *c)
{
	c->armed = false;
	if (c->ring)
		munmap(c->ring, p->ring_len);
	if (c->poll_link)
		bpf_link__destroy(c->poll_link);
	else if (c->poll_fd >= 0)
		close(c->poll_fd);
	if (c->bp_link)
		bpf_link__destroy(c->bp_link);
	else if (c->bp_fd >= 0)
		close(c->bp_fd);
	c->poll_link = c->bp_link = NULL;
	c->ring = NULL;
	c->poll_fd = c->bp_fd = -1;
}

/* Pinned and real-time, or said: an armer that waits for the workload arms too late. */
static void armer_setup(struct pair_cpu *c)
{
	int pin_err, fifo_err;

	thread__pin_fifo(c->cpu, ARMER_PRIORITY, &pin_err, &fifo_err);
	if (pin_err)
		pr_warn("data breakpoints: cannot pin CPU %d's armer to it: %s (its arms are IPIs "
			"from another CPU)\n", c->cpu, strerror(-pin_err));
	if (fifo_err && !c->p->ncpus)
		pr_warn("data breakpoints: cannot make the armers real-time: %s (a busy machine "
			"delays arms past the stall)\n", strerror(-fifo_err));
}

/* The duty cap's rest (thread.h), until `until`: cut short by the stop. */
static void armer_rest(struct pairs *p, const struct pair_cpu *c, uint64_t until)
{
	struct pollfd stop = { .fd = p->stop_fd, .events = POLLIN };

	while (until && !p->stop && !c->down) {
		uint64_t now = clock__now_ns();

		if (now >= until)
			break;
		poll(&stop, 1, (int)((until - now + 999999) / 1000000));
	}
}

static void *armer(void *arg)
{
	struct pair_cpu *c = arg;
	struct pairs *p = c->p;
	struct pollfd fds[2] = { { .fd = c->poll_fd, .events = POLLIN },
				 { .fd = p->stop_fd, .events = POLLIN } };
	__u64 *ack = &p->skel->bss->pair_ack[c->cpu];
	struct thread_duty duty;

	armer_setup(c);
	thread__duty_init(&duty);
	while (!p->stop && !c->down) {
		uint64_t word = __atomic_load_n(&p->skel->bss->pair_request, __ATOMIC_ACQUIRE);

		if (word != c->acked) {
			c->acked = word;
			/* While the register moves, its traps cannot tell which address (pair_trap.bpf.h). */
			__atomic_store_n(ack, 0, __ATOMIC_RELEASE);
			/* Then at once for a newer request that may have come meanwhile. */
			__atomic_store_n(ack, retarget(p, c, word), __ATOMIC_RELEASE);
		} else {
			poll(fds, 2, 1000);
			drain(c);
		}
		/* Real-time: a stream of requests must not hold the CPU (thread.h's cap). */
		armer_rest(p, c, thread__duty_until(&duty));
	}
	/*
	 * The stop: this CPU's events closed here, on the CPU; from
	 * pairs__free()'s thread each would be an IPI to this CPU and an
	 * unbounded wait in the kernel for it (docs/kernel-mode.md).
	 */
	if (p->stop && !c->down && thread__on_cpu(c->cpu)) {
		close_events(p, c);
		c->released = true;
	}
	return NULL;
}

static int open_cpu(struct pairs *p, struct pair_cpu *c)
{
	int err = open_register(p, c);

	if (!err)
		err = open_poll(p, c);
	if (!err) {
		/* Nothing acknowledged yet: the poll must not take 0 for an answer to 0. */
		c->acked = p->skel->bss->pair_request;
		p->skel->bss->pair_ack[c->cpu] = c->acked;
		c->down = false;
		err = -pthread_create(&c->thread, NULL, armer, c);
		c->started = !err;
	}
	return err;
}

static void close_cpu(struct pairs *p, struct pair_cpu *c)
{
	if (c->started) {
		c->down = true;		/* its poll returns within a second */
		pthread_join(c->thread, NULL);
	}
	c->started = false;
	close_events(p, c);
}

/* The CPUs online now; -errno when they cannot be read. */
static int online_cpus(bool *online)
{
	char list[1024] = "";
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");

	if (!f)
		return -errno;
	if (!fgets(list, sizeof(list), f))
		list[0] = 0;
	fclose(f);
	return hwbp__parse_cpus(list, online, KCSAND_PAIR_MAX_CPUS);
}

/* CPU i is online: its register, poll and armer, then watchers wait for it. */
static int cpu_up(struct pairs *p, unsigned int i, bool later)
{
	struct pair_cpu *c = &p->cpu[i];
	cpu_set_t saved;
	bool back = !thread__save_cpus(&saved);
	int err;

	c->p = p;
	c->cpu = (int)i;
	/* Opened on CPU i itself: from another, each open is an IPI and a wait (thread.h). */
	c->opened_away = thread__visit_cpu(c->cpu) != 0;
	err = open_cpu(p, c);
	if (err)
		close_cpu(p, c);
	if (back)
		thread__restore_cpus(&saved);
	if (err) {
		pr_warn("data breakpoints: cannot set up CPU %u%s: %s%s\n", i,
			later ? ", brought online" : "", strerror(-err),
			err == -ENOSPC ? " (no free debug register)" : "");
		return err;
	}
	c->up = true;
	p->ncpus++;
	__atomic_store_n(&p->skel->bss->pair_live[i], 1, __ATOMIC_RELEASE);
	if (i + 1 > p->span) {
		p->span = i + 1;
		/* Not before start's end, nor after free's 0 (the scanner is joined first). */
		if (later)
			__atomic_store_n(&p->skel->bss->pair_cpus, p->span, __ATOMIC_RELEASE);
	}
	if (later)
		pr_warn("data breakpoints: CPU %u came online: its register is armed (opened %s)\n",
			i, c->opened_away ? "from another CPU, an IPI each" : "on it");
	return 0;
}

/* CPU i went offline: no watcher waits for it, then its armer stops and its events close. */
static void cpu_down(struct pairs *p, unsigned int i)
{
	struct pair_cpu *c = &p->cpu[i];

	__atomic_store_n(&p->skel->bss->pair_live[i], 0, __ATOMIC_RELEASE);
	close_cpu(p, c);
	c->up = false;
	p->ncpus--;
	pr_warn("data breakpoints: CPU %u went offline\n", i);
}

/* Once a second until stopped: CPUs that went offline or came online since. */
static void *scanner(void *arg)
{
	struct pairs *p = arg;
	struct pollfd fd = { .fd = p->stop_fd, .events = POLLIN };

	while (!p->stop) {
		bool online[KCSAND_PAIR_MAX_CPUS] = {};

		poll(&fd, 1, 1000);
		if (p->stop || online_cpus(online) < 0)
			continue;
		for (unsigned int i = 0; i < KCSAND_PAIR_MAX_CPUS && !p->stop; i++) {
			if (online[i] && !p->cpu[i].up)
				cpu_up(p, i, true);
			else if (!online[i] && p->cpu[i].up)
				cpu_down(p, i);
		}
	}
	return NULL;
}

/* Where each CPU's events were opened at the start, as the teardown says its closes. */
static void say_opens(const struct pairs *p)
{
	unsigned int local = 0, remote = 0;

	for (unsigned int i = 0; i < p->span; i++) {
		local += p->cpu[i].up && !p->cpu[i].opened_away;
		remote += p->cpu[i].up && p->cpu[i].opened_away;
	}
	pr_info("data breakpoints: start: %u CPUs' events opened on their own CPU, %u from "
		"another (an IPI each)\n", local, remote);
}

static int start(struct pairs *p, uint64_t idle)
{
	bool online[KCSAND_PAIR_MAX_CPUS] = {};
	long n = online_cpus(online);

	p->attr = (struct perf_event_attr){
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(p->attr),
		.bp_type = HW_BREAKPOINT_W,
		.bp_addr = idle & ~7ULL,
		.bp_len = HW_BREAKPOINT_LEN_8,
		.sample_period = 1,
		.exclude_user = 1,
		.exclude_hv = 1,
		.disabled = 1,
	};
	p->ring_len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	p->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (n < 0)
		return n;
	p->cpu = calloc(KCSAND_PAIR_MAX_CPUS, sizeof(*p->cpu));
	if (!p->cpu || p->stop_fd < 0)
		return -ENOMEM;
	for (unsigned int i = 0; i < KCSAND_PAIR_MAX_CPUS; i++)
		p->cpu[i].bp_fd = p->cpu[i].poll_fd = -1;
	for (unsigned int i = 0; i < KCSAND_PAIR_MAX_CPUS; i++) {
		int err = online[i] ? cpu_up(p, i, false) : 0;

		if (err)
			return err;
	}
	say_opens(p);
	n = -pthread_create(&p->scanner, NULL, scanner, p);
	p->scanning = !n;
	if (n)
		pr_warn("data breakpoints: cannot start the hotplug scan: %s (a CPU brought online "
			"later has no data breakpoint)\n", strerror(-n));
	return 0;
}

int pairs__new(struct kcsand_bpf *skel, uint64_t idle, struct pairs **out)
{
	struct pairs *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->skel = skel;
	p->stop_fd = -1;
	err = start(p, idle);
	if (err) {
		pairs__free(p);
		return err;
	}
	/* Last: only now may a watcher ask (and it waits for the live ones below span). */
	__atomic_store_n(&skel->bss->pair_cpus, p->span, __ATOMIC_RELEASE);
	*out = p;
	return 0;
}

void pairs__stats(const struct pairs *p, struct pairs_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!p)
		return;
	for (int i = 0; i < KCSAND_PAIR_CTR_COUNT; i++)
		st->counters[i] = p->skel->bss->pair_counters[i];
	st->cpus = p->ncpus;
	for (unsigned int i = 0; i < p->span; i++) {
		st->retargets += p->cpu[i].moves;
		st->retarget_ns += p->cpu[i].move_ns;
		st->refused += p->cpu[i].refused;
	}
}

/*
 * Join CPU c's armer, which closes the CPU's events on its way out, within
 * PAIR_STOP_MS; false, said, when it has not ended: its CPU has not run it,
 * and the events stay open, the IPI a close from here would send unanswered.
 */
static bool join_armer(struct pair_cpu *c)
{
	if (!c->started)
		return true;
	if (thread__join_within(c->thread, PAIR_STOP_MS)) {
		pr_warn("data breakpoints: CPU %d's armer has not stopped in %u ms: CPU %d may "
			"not be taking interrupts; its data breakpoint is left open\n", c->cpu,
			PAIR_STOP_MS, c->cpu);
		return false;
	}
	c->started = false;
	return true;
}

void pairs__free(struct pairs *p)
{
	uint64_t one = 1;
	bool stuck = false;
	unsigned int local = 0, remote = 0;

	if (!p)
		return;
	/* No new request from here; one in flight ends at its bounded wait. */
	__atomic_store_n(&p->skel->bss->pair_cpus, 0, __ATOMIC_RELEASE);
	p->stop = true;
	if (p->stop_fd >= 0 && write(p->stop_fd, &one, sizeof(one)) < 0)
		pr_warn("data breakpoints: cannot wake the armers to stop: %s\n", strerror(errno));
	if (p->scanning)
		pthread_join(p->scanner, NULL);
	for (unsigned int i = 0; p->cpu && i < p->span; i++) {
		p->skel->bss->pair_live[i] = 0;
		/* Joined before close_cpu() says down: an armer that sees it closes nothing. */
		if (!join_armer(&p->cpu[i])) {
			stuck = true;
			continue;
		}
		local += p->cpu[i].released;
		remote += !p->cpu[i].released && p->cpu[i].bp_fd >= 0;
		close_cpu(p, &p->cpu[i]);
	}
	if (stuck)
		return;		/* an armer still runs and reads p: left, not freed */
	pr_info("data breakpoints: teardown: %u CPUs' events closed on their own CPU, %u from "
		"another (an IPI each)\n", local, remote);
	if (p->stop_fd >= 0)
		close(p->stop_fd);
	free(p->cpu);
	free(p);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Code-breakpoint sampling: the CPUs and their mover threads.  Each CPU has
 * a mover of its own, pinned to it and real-time, which owns the CPU's
 * events (kbp_event.c): its moves are local calls, with no IPI.  The first
 * CPU's mover (the lead) decides at each tick (the period), under the lock,
 * and bumps a register's generation when it places it (kbp_place.c); each
 * mover moves its own register when it sees the new one.  The lead also
 * runs the budget (kbp_budget.c), the hotplug scan and the coverage lines
 * once a second or minute, and at the stop each mover closes its CPU's
 * events on the CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "kbp_int.h"
#include "util/clock.h"
#include "util/print.h"
#include "util/thread.h"

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
int kbp_all_cpus(struct kbp *k)
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
	cpu_set_t saved;
	bool back = !thread__save_cpus(&saved);
	int err = 0;

	c->opened_away = false;
	kbp_visit(c);	/* the lead opens them on c, and comes back */
	for (unsigned int r = 0; r < k->nregs && !err; r++) {
		err = kbp_open_event(k, c, r, k->reg[r].i);
		c->gen[r] = k->reg[r].gen;
		if (!err && !c->gen[r])
			kbp_park(c, r);
	}
	c->down = false;
	if (!err && k->fns)
		kip__open(&c->ip, c->cpu, KBP_IP_HZ);	/* none: its evidence is the fires' */
	if (back)
		thread__restore_cpus(&saved);
	if (!err)
		err = -pthread_create(&c->mover, NULL, mover, c);
	if (err) {
		for (unsigned int r = 0; r < KCSAND_KXBP_SLOTS; r++)
			kbp_close_event(c, r);
		kip__close(&c->ip);
		pr_warn("breakpoints: CPU %d came online but cannot be sampled: %s\n", c->cpu,
			strerror(-err));
		return err;
	}
	c->started = true;
	pr_warn("breakpoints: CPU %d came online: sampling it with %u registers (opened %s)\n",
		c->cpu, k->nregs, c->opened_away ? "from another CPU, an IPI each" : "on it");
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
	kbp_close_cpu_events(c);
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
			if (kbp_schedule(k, now))
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
	kbp_close_cpu_events(c);
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
				kbp_move(k, c, r, reg[r].i);
			else
				kbp_park(c, r);
			c->gen[r] = reg[r].gen;
		}
		if (c == k->lead) {
			kbp_drain_ips(k);
			if (k->o.budget > 0)
				kbp_budget_tick(k, clock__now_ns());
			scan_hotplug(k, clock__now_ns());
			kbp_coverage_minute(k, clock__now_ns());
		}
		c->cpu_ns = base + clock__thread_cpu_ns() - cpu0;
		/* Real-time: it rests by construction, or its ticks could hold the CPU (thread.h). */
		rest(k, c, thread__duty_until(&duty));
	}
	if (k->stop && !c->down)
		release_on_cpu(k, c);
	return NULL;
}

int kbp_start_movers(struct kbp *k)
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
bool kbp_stop_movers(struct kbp *k)
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

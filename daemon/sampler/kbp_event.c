// SPDX-License-Identifier: GPL-2.0-only
/*
 * Code-breakpoint sampling: the perf breakpoint events, one per CPU and
 * register, and the BPF side's slot of each.
 *
 * A register's move re-targets its event with PERF_EVENT_IOC_MODIFY_ATTRIBUTES:
 * the kernel disables the event on its CPU, changes the address and enables
 * it again.  Done from another CPU, that is an IPI to the event's CPU and a
 * wait for it, which on a busy (or emulated) machine takes milliseconds
 * (docs/kernel-mode.md).  So a CPU's events are moved, parked and closed by
 * its own mover thread (kbp_mover.c), pinned to it: local calls, with no IPI.
 * The BPF side learns a CPU's new site first (kxbp_slots[cpu][r]); a trap
 * still at the old address in between no longer matches and is dropped.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kbp_int.h"
#include "kcsand.skel.h"
#include "util/clock.h"
#include "util/print.h"
#include "util/thread.h"

static void refuse(struct kbp *k, size_t i, int err)
{
	if (!kbp_mark_site(k, i, SEEN_REFUSED))
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
int kbp_open_event(struct kbp *k, struct kbp_cpu *c, unsigned int r, size_t i)
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

void kbp_close_event(struct kbp_cpu *c, unsigned int r)
{
	if (c->link[r])
		bpf_link__destroy(c->link[r]);	/* closes the event too */
	else if (c->fd[r] >= 0)
		close(c->fd[r]);
	c->link[r] = NULL;
	c->fd[r] = -1;
}

/* CPU c's events and IP sampler, closed. */
void kbp_close_cpu_events(struct kbp_cpu *c)
{
	for (unsigned int r = 0; r < KCSAND_KXBP_SLOTS; r++)
		kbp_close_event(c, r);
	if (c->ip.fd >= 0)
		kip__close(&c->ip);
}

/* Move register r of CPU c to site i; a refusal is marked, and the lead places it again. */
void kbp_move(struct kbp *k, struct kbp_cpu *c, unsigned int r, size_t i)
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
void kbp_park(struct kbp_cpu *c, unsigned int r)
{
	if (!c->parked[r] && !ioctl(c->fd[r], PERF_EVENT_IOC_DISABLE, 0))
		c->parked[r] = true;
}

/*
 * Go to CPU c for calls on its events (thread__visit_cpu): there they are
 * local calls, where from another CPU each is an IPI and a wait for its
 * answer that nothing bounds.  A CPU the thread cannot go to has its events
 * opened from where the thread is, as before, and c->opened_away says so.
 */
void kbp_visit(struct kbp_cpu *c)
{
	if (thread__visit_cpu(c->cpu))
		c->opened_away = true;
}

/* Open register r on every CPU, on its next site; -errno when the CPUs have none free. */
static int open_reg(struct kbp *k, unsigned int r)
{
	for (int tries = 0; tries < KBP_MAX_TRIES; tries++) {
		enum kbp_source from = KBP_CYCLE;
		bool pin;
		long i = kbp_next_for(k, r, &from, &pin);
		int err = i < 0 ? -ENOENT : 0;

		for (unsigned int c = 0; c < k->ncpus && !err; c++) {
			if (!k->cpu[c].online)
				continue;
			kbp_visit(&k->cpu[c]);
			err = kbp_open_event(k, &k->cpu[c], r, i);
		}
		if (!err) {
			kbp_place(k, r, i, from, pin, clock__now_ns());
			for (unsigned int c = 0; c < k->ncpus; c++)
				k->cpu[c].gen[r] = k->reg[r].gen;
			return 0;
		}
		for (unsigned int c = 0; c < k->ncpus; c++) {
			if (k->cpu[c].fd[r] >= 0)
				kbp_visit(&k->cpu[c]);
			kbp_close_event(&k->cpu[c], r);
		}
		if (err != -EINVAL)
			return err;
		refuse(k, i, err);
	}
	return -ENOENT;
}

/*
 * Every register on every online CPU, each CPU's from the CPU itself
 * (kbp_visit); the thread's CPUs given back after.
 */
int kbp_open_regs(struct kbp *k)
{
	cpu_set_t saved;
	bool back = !thread__save_cpus(&saved);
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
		if (err)
			break;	/* -ENOSPC, -EBUSY: no free debug register, sample with fewer */
		k->nregs++;
	}
	if (back)
		thread__restore_cpus(&saved);
	return k->nregs ? 0 : err;
}

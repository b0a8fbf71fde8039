// SPDX-License-Identifier: GPL-2.0-only
/*
 * Code-breakpoint sampling: the budget.  Once a second the lead measures
 * what sampling cost (the moves, the checks' BPF time with their stalls,
 * and the traps, at the cost calibrated at start) against the CPU time
 * that elapsed (the wall clock times the CPUs online: an idle machine is
 * not a reason to sample less), and kbp_policy__next() sets the period (the
 * tick) and the registers in use.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kbp_int.h"
#include "ksampler.h"
#include "kcsand.skel.h"
#include "util/print.h"

void kbp_slots_sum(const struct kbp *k, uint64_t *hits, uint64_t *checked, uint64_t *ns)
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
void kbp_budget_tick(struct kbp *k, uint64_t now)
{
	struct kbp_control *ctl = &k->ctl;
	uint64_t hits, checked, bpf_ns, move_ns = 0;
	double elapsed, probes, cost, share;
	struct kbp_plan p;

	if (ctl->primed && now - ctl->t_ns < KBP_CONTROL_NS)
		return;
	kbp_slots_sum(k, &hits, &checked, &bpf_ns);
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
 * What a trap on a sampled site costs beyond its check: getppid(2) with an
 * execute breakpoint in it, on this thread only, against without.  The
 * program is kcsand_kxbp on the cookie of a slot no register samples (r =
 * KCSAND_KXBP_SLOTS - 1, never given to sampling), so it returns at once,
 * as it does on a hot site past its checks.  0, said, when it cannot be
 * measured: the budget then counts the checks and the moves only.
 */
double kbp_calibrate_trap(struct kbp *k)
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

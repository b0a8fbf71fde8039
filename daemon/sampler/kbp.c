// SPDX-License-Identifier: GPL-2.0-only
/*
 * Code-breakpoint sampling in kernel mode: its start and its stop.  kbp.h
 * says what it does, after DataCollider; kbp_int.h which file does what.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "kbp_int.h"
#include "util/print.h"

/* The pinned sites' own cycle (--pin), said with -v; -ENOMEM. */
static int pin_sites(struct kbp *k, const bool *pin)
{
	for (size_t i = 0; pin && i < k->n; i++)
		k->pin.n += pin[i];
	if (!k->pin.n)
		return 0;
	k->pin.order = malloc(k->pin.n * sizeof(*k->pin.order));
	if (!k->pin.order)
		return -ENOMEM;
	for (size_t i = 0, j = 0; i < k->n; i++) {
		if (!pin[i])
			continue;
		k->pin.order[j++] = i;
		k->seen[i] |= SEEN_PIN;
	}
	kbp_shuffle(k, k->pin.order, k->pin.n);
	pr_info("breakpoints: %zu pinned sites of %zu: register 0 cycles over them\n", k->pin.n,
		k->n);
	return 0;
}

/* Where each CPU's events were opened (kbp_visit): as the teardown's line says its closes. */
static void say_opens(const struct kbp *k)
{
	unsigned int local = 0, remote = 0;

	for (unsigned int c = 0; c < k->ncpus; c++) {
		local += k->cpu[c].online && !k->cpu[c].opened_away;
		remote += k->cpu[c].online && k->cpu[c].opened_away;
	}
	pr_info("breakpoints: start: %u CPUs' events opened on their own CPU, %u from another "
		"(an IPI each)\n", local, remote);
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
	k->cycle.order = malloc(n * sizeof(*k->cycle.order));
	k->cycle.n = n;
	k->seen = calloc(n, 1);
	k->misses = calloc(n, 1);
	k->warm = malloc(n * sizeof(*k->warm));
	k->live = malloc(n * sizeof(*k->live));
	k->hot = malloc(n * sizeof(*k->hot));
	k->fires = calloc(n, sizeof(*k->fires));
	k->held_ns = calloc(n, sizeof(*k->held_ns));
	if (!n || !k->addr || !k->site || !k->cycle.order || !k->seen || !k->misses || !k->warm ||
	    !k->live || !k->hot || !k->fires || !k->held_ns || !o->period_us ||
	    kbp_index_functions(k, fn)) {
		kbp__free(k);
		return n ? -ENOMEM : -ENOENT;
	}
	memcpy(k->addr, addr, n * sizeof(*addr));
	memcpy(k->site, site, n * sizeof(*site));
	for (size_t i = 0; i < n; i++)
		k->cycle.order[i] = i;
	k->seed = o->seed;
	k->period_ns = o->period_us * 1000ull;	/* before open_regs: the slots' check spread */
	kbp_shuffle(k, k->cycle.order, k->cycle.n);
	err = pin_sites(k, o->pin);
	if (!err)
		err = kbp_all_cpus(k);
	if (!err)
		err = kbp_open_regs(k);
	/* After open_regs (it sets attr); a fixed period has no budget to serve. */
	if (!err && o->budget > 0)
		k->trap_ns = kbp_calibrate_trap(k);
	if (err) {
		pr_warn("breakpoints: cannot open an execute breakpoint on each CPU: %s%s\n",
			strerror(-err), err == -ENOSPC ? " (no free debug register)" : "");
		kbp__free(k);
		return err;
	}
	kbp_open_ips(k);
	say_opens(k);
	err = kbp_start_movers(k);
	if (err) {
		pr_warn("breakpoints: cannot start a mover thread: %s\n", strerror(-err));
		kbp__free(k);
		return err;
	}
	*out = k;
	return 0;
}

void kbp__free(struct kbp *k)
{
	unsigned int local = 0, remote = 0;

	if (!k)
		return;
	if (!kbp_stop_movers(k))
		return;		/* a mover still runs and reads k: left, not freed */
	/* The movers are gone: the tally is still. */
	if (k->lead)
		kbp_print_coverage(k, "at the end");
	/* What a mover did not close on its CPU (not pinned, or never started). */
	for (unsigned int c = 0; c < k->ncpus; c++) {
		struct kbp_cpu *kc = &k->cpu[c];

		local += kc->released;
		remote += !kc->released && kc->fd[0] >= 0;
		if (!kc->released)
			kbp_close_cpu_events(kc);
	}
	pr_info("breakpoints: teardown: %u CPUs' events closed on their own CPU, %u from "
		"another (an IPI each)\n", local, remote);
	free(k->addr);
	free(k->site);
	free(k->cycle.order);
	free(k->pin.order);
	free(k->seen);
	free(k->misses);
	free(k->fns);
	free(k->fid);
	free(k->byfn);
	free(k->fwarm);
	free(k->warm);
	free(k->live);
	free(k->hot);
	free(k->fires);
	free(k->held_ns);
	if (k->sync) {
		pthread_cond_destroy(&k->wake);
		pthread_mutex_destroy(&k->lock);
	}
	free(k);
}

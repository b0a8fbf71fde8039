/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Code-breakpoint sampling in kernel mode, after DataCollider (OSDI 2010):
 * no kprobe per site.  Debug register r of every CPU executes-breaks on one
 * site at a time (a perf breakpoint event per CPU and register,
 * HW_BREAKPOINT_X, kernel only, with the engine's kcsand_kxbp program), and
 * every period the registers move on to the next sites of a shuffled cycle
 * of all sites (PERF_EVENT_IOC_MODIFY_ATTRIBUTES), each CPU's by a thread
 * of its own.  Sampling is by site,
 * not by execution: a rare path gets as many chances as a hot one, and
 * nothing traps but the sampled sites.
 */
#ifndef KCSAND_KBP_H
#define KCSAND_KBP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kcsand_bpf;

struct kbp_opts {
	unsigned int nregs;		/* debug registers per CPU to use, 1..4 */
	unsigned int period_us;		/* how long each set of sites stays sampled */
	unsigned int seed;		/* the cycle's shuffle */
	int verbose;
};

struct kbp_stats {
	size_t sites;			/* in the cycle */
	size_t sampled;			/* sampled at least once */
	size_t refused;			/* addresses the kernel would not break on */
	unsigned int nregs, ncpus;
	uint64_t cycles;		/* complete passes over every site */
	uint64_t retargets;		/* register moves, one CPU's event each */
	uint64_t retarget_ns;		/* time spent moving them */
	uint64_t hits;			/* traps that ran the check */
	unsigned int pinned;		/* CPUs whose mover runs on them (local moves) */
};

struct kbp;

/*
 * Open nregs breakpoint events per online CPU on the first sites of a
 * shuffled cycle over addr[i] (site index site[i]), with the program
 * attached.  Fewer registers when the CPUs have fewer free; -errno with a
 * message when none could be had.
 */
int kbp__new(struct kcsand_bpf *skel, const uint64_t *addr, const uint32_t *site, size_t n,
	     const struct kbp_opts *o, struct kbp **out);
void kbp__stats(const struct kbp *k, struct kbp_stats *st);
void kbp__free(struct kbp *k);

#endif

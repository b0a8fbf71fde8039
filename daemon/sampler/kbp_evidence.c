// SPDX-License-Identifier: GPL-2.0-only
/*
 * Code-breakpoint sampling: the evidence of running.  A function that a
 * kernel IP sample (kip.c) landed in, or one of whose sites fired, ran: its
 * sites not yet run go to the warm queue once, and kbp_place.c places them
 * by warm's share of the register time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "kbp_int.h"
#include "util/print.h"
#include "util/thread.h"

/* Function f ran: its sites not yet run to the warm queue, once. */
void kbp_warm_fn(struct kbp *k, uint32_t f)
{
	const struct kbp_fnrec *fr = &k->fns[f];

	if (k->fwarm[f])
		return;
	k->fwarm[f] = 1;
	k->tally.warm_fns++;
	for (uint32_t j = 0; j < fr->count; j++) {
		uint32_t i = k->byfn[fr->first + j];

		/* Each site once, so the ring of n never overruns. */
		if (!(k->seen[i] & (SEEN_RAN | SEEN_REFUSED)) && kbp_mark_site(k, i, SEEN_WARM))
			k->warm[k->warm_tail++ % k->n] = i;
	}
}

/* A kernel IP sample: the function it fell in, if it is one of ours, ran. */
static void ip_seen(void *ctx, uint64_t ip)
{
	struct kbp *k = ctx;
	size_t lo = 0, hi = k->nfns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->fns[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && ip < k->fns[lo - 1].end)
		kbp_warm_fn(k, lo - 1);
}

/* Each tick, from the lead: the IP samples of every CPU since the last. */
void kbp_drain_ips(struct kbp *k)
{
	for (unsigned int c = 0; c < k->ncpus; c++)
		if (k->cpu[c].ip.fd >= 0)
			k->tally.ips += kip__drain(&k->cpu[c].ip, ip_seen, k);
}

/* By function start, then by index: a function's sites together, in their order. */
static int by_fn(const void *a, const void *b, void *arg)
{
	const struct kbp_fn *fn = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (fn[x].start != fn[y].start)
		return fn[x].start < fn[y].start ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The functions of the evidence, from each site's (none when fn is NULL); -ENOMEM. */
int kbp_index_functions(struct kbp *k, const struct kbp_fn *fn)
{
	if (!fn)
		return 0;
	k->fns = malloc(k->n * sizeof(*k->fns));
	k->fid = malloc(k->n * sizeof(*k->fid));
	k->byfn = malloc(k->n * sizeof(*k->byfn));
	k->fwarm = calloc(k->n, 1);
	if (!k->fns || !k->fid || !k->byfn || !k->fwarm)
		return -ENOMEM;
	for (size_t i = 0; i < k->n; i++)
		k->byfn[i] = i;
	qsort_r(k->byfn, k->n, sizeof(*k->byfn), by_fn, (void *)fn);
	for (size_t j = 0; j < k->n; j++) {
		uint32_t i = k->byfn[j];

		if (!k->nfns || fn[i].start != k->fns[k->nfns - 1].start)
			k->fns[k->nfns++] = (struct kbp_fnrec){ .start = fn[i].start,
								.end = fn[i].end, .first = j };
		k->fns[k->nfns - 1].count++;
		k->fid[i] = k->nfns - 1;
	}
	return 0;
}

/*
 * Each online CPU's IP sampler, when there are functions to find; said when
 * there is none: then only the sites' own fires are evidence.
 */
void kbp_open_ips(struct kbp *k)
{
	int err = 0, opened = 0;
	cpu_set_t saved;
	bool back;

	if (!k->fns)
		return;
	back = !thread__save_cpus(&saved);
	for (unsigned int c = 0; c < k->ncpus; c++) {
		int e = 0;

		if (k->cpu[c].online) {
			kbp_visit(&k->cpu[c]);	/* opened there, as its breakpoints */
			e = kip__open(&k->cpu[c].ip, k->cpu[c].cpu, KBP_IP_HZ);
		}
		opened += k->cpu[c].online && !e;
		err = e ? e : err;
	}
	if (back)
		thread__restore_cpus(&saved);
	if (err)
		pr_warn("breakpoints: no cpu-clock sampler of kernel IPs on %s CPU: %s (placements "
			"follow the sites' own fires only there)\n", opened ? "some" : "any",
			strerror(-err));
}

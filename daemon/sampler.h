/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The site sampler, after DataCollider (Erickson et al., OSDI 2010): arm a
 * random subset of the sites so that the estimated overhead stays within
 * --overhead-budget, and readjust the subset every period from each site's
 * measured hit rate and the measured cost of a hit.  Rarely-hit sites stay
 * armed; hot sites take turns.
 */
#ifndef KCSAND_SAMPLER_H
#define KCSAND_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct engine;
struct kcsand_bpf;
struct sampler;

struct sampler_stats {
	size_t armed;			/* sites armed now */
	size_t total;			/* sites known */
	double est_overhead;		/* estimated for the armed set, as a fraction of native time */
	double measured_overhead;	/* over the last period */
	double trap_ns;			/* calibrated cost of a trap with no BPF work */
	unsigned long periods;
	unsigned long rearms;
	double rearm_ms;		/* the last re-attach */
};

/*
 * The pure policy, separate for the unit tests.  load[i] is what site i
 * costs while armed, in CPU-seconds per second; known[i] false means not
 * measured yet (it is armed, to learn).  Sites are sorted by load; the
 * cheapest stay armed while they fit half of max_load, every other site is
 * armed with the probability that fills the rest on average.  Writes
 * armed[] and returns the summed load of the armed set.
 */
double sampler_choose(const double *load, const bool *known, size_t n, double max_load,
		      uint64_t *rng, uint8_t *armed);

/* Before the BPF object is loaded: size the statistics map for capacity sites. */
int sampler__prepare(struct kcsand_bpf *skel, size_t capacity, bool use_bitmap);
/* After load and attach: calibrate the trap cost and start with every site armed. */
int sampler__new(struct engine *e, struct kcsand_bpf *skel, size_t capacity, bool multi,
		 struct sampler **out);
/* Called from the engine's poll loop: readjusts the armed set once a period. */
void sampler__tick(struct sampler *s);
void sampler__get_stats(const struct sampler *s, struct sampler_stats *out);
void sampler__free(struct sampler *s);

#endif

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The site sampler's policy, shared by user and kernel mode: which sites
 * stay armed and what share of the time hot sites take turns in
 * (sampler__choose), and which hot sites a turn arms (hot_cycle__next).  Pure
 * functions of what the caller measured, so that the unit tests drive them
 * directly; sampler.c measures and arms.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kbp.h"
#include "sampler.h"
#include "util/array.h"

/* A site whose overhead alone is above this share of the budget is hot: it takes turns. */
#define SAMPLER_HOT_SHARE	0.25

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

double sampler__choose(const double *x, const bool *known, size_t n, double budget,
		       double turn_cost, uint8_t *armed, uint8_t *hot, double *hot_share)
{
	struct by_load *v = calloc(n ? n : 1, sizeof(*v));
	double cold = 0, rem, q;
	size_t nv = 0, k;

	*hot_share = 0;
	memset(hot, 0, n);
	if (!v) {
		memset(armed, 1, n);
		return INFINITY;
	}
	for (size_t i = 0; i < n; i++) {
		armed[i] = !known[i];	/* unmeasured: arm it to learn its cost */
		if (known[i])
			v[nv++] = (struct by_load){ x[i], i };
	}
	qsort(v, nv, sizeof(*v), cmp_load);
	/* Cold sites add up: the cheapest stay armed while they fit half the budget. */
	for (k = 0; k < nv; k++) {
		if (v[k].load > 0 && (v[k].load > budget * SAMPLER_HOT_SHARE ||
				      cold + v[k].load > budget / 2))
			break;
		cold += v[k].load;
		armed[v[k].i] = 1;
	}
	for (size_t j = k; j < nv; j++)
		hot[v[j].i] = 1;
	free(v);
	if (k == nv)
		return cold;
	/*
	 * Hot sites do not add up: one of them is enough to keep its threads
	 * in traps for the whole turn.  Turns take the share q of the time
	 * that keeps the rest of the budget: a turn costs turn_cost of the
	 * target's CPU time, so the overhead is q * turn_cost / (1 - q * turn_cost).
	 */
	/*
	 * A turn that cost nothing measurable (its thread did not run, or
	 * trapped too little to show) is cheap, not forbidden: the share is
	 * then all of the time, and the next turns measure the cost again.  A
	 * share of 0 would take no turn, so the cost would never be measured
	 * again (the guest's sampled_hot_read: one turn in a whole run).
	 */
	rem = budget - cold;
	q = rem <= 0 ? 0 : turn_cost > 0 ? rem / (1 + rem) / turn_cost : 1;
	if (q > 1)
		q = 1;
	*hot_share = q;
	return q * turn_cost < 1 ? cold + q * turn_cost / (1 - q * turn_cost) : INFINITY;
}

size_t hot_cycle__next(struct hot_cycle *c, const uint8_t *hot, size_t n, size_t k,
		       uint64_t *rng, uint8_t *armed)
{
	size_t got = 0;
	bool fresh = false;

	while (got < k) {
		if (c->pos == c->len) {
			if (fresh)
				break;	/* a whole new cycle had no more hot sites */
			if (ARRAY_RESERVE_MORE(c->v, c->cap, 0, n, n))
				break;
			c->len = c->pos = 0;
			for (size_t i = 0; i < n; i++)
				if (hot[i])
					c->v[c->len++] = i;
			/* Fisher-Yates: a new order every cycle. */
			for (size_t i = c->len; i > 1; i--) {
				size_t j = xorshift(rng) % i, t = c->v[i - 1];

				c->v[i - 1] = c->v[j];
				c->v[j] = t;
			}
			fresh = true;
			continue;
		}
		size_t i = c->v[c->pos++];

		/* A site that cooled down since the cycle was drawn, or is armed anyway. */
		if (i < n && hot[i] && !armed[i]) {
			armed[i] = 1;
			got++;
		}
	}
	return got;
}

void hot_cycle__free(struct hot_cycle *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

bool site_backoff__hit(struct site_backoff *b, uint64_t hits, unsigned int backoff_hits,
		       uint64_t level0_cpu_ns, uint64_t now_ns, uint64_t cpu_ns)
{
	uint64_t need = backoff_hits;

	/* Level 0 is timed from the site's first hit, not from when it was attached. */
	if (!b->level && !b->hits && hits)
		b->first_cpu_ns = cpu_ns;

	/* Ten times the hits at each level down, as its share of the time is a tenth. */
	for (unsigned int l = 0; l < b->level; l++)
		need *= 10;
	b->hits += hits;
	if (b->level >= SITE_BACKOFF_LEVELS - 1)
		return false;
	if (b->hits < need && !site_backoff__level0_over(b, level0_cpu_ns, cpu_ns))
		return false;
	/* Down one level at a time: a burst of hits still leaves the next level its own. */
	b->level++;
	b->hits = 0;
	b->since_ns = now_ns;
	b->turn_ns = 0;
	return true;
}

void site_backoff__demote(struct site_backoff *b, uint64_t now_ns)
{
	if (b->level)
		return;
	b->level = 1;
	b->hits = 0;
	b->since_ns = now_ns;
	b->turn_ns = 0;
}

bool cold_credit__charge(double *credit_ns, double cap_ns, double budget, double native_ns,
			double spent_ns)
{
	*credit_ns += budget * (native_ns > 0 ? native_ns : 0) - (spent_ns > 0 ? spent_ns : 0);
	if (*credit_ns > cap_ns)
		*credit_ns = cap_ns;
	if (*credit_ns >= 0)
		return false;
	/* The overdraft is forgiven: what ran over is the budget's from now on. */
	*credit_ns = 0;
	return true;
}

bool site_backoff__level0_over(const struct site_backoff *b, uint64_t level0_cpu_ns,
			       uint64_t cpu_ns)
{
	return !b->level && b->hits && cpu_ns - b->first_cpu_ns >= level0_cpu_ns;
}

double site_backoff__share(const struct site_backoff *b)
{
	static const double share[SITE_BACKOFF_LEVELS] = { 1, 0.1, 0.01, 0.001 };

	return share[b->level < SITE_BACKOFF_LEVELS ? b->level : SITE_BACKOFF_LEVELS - 1];
}

bool site_backoff__may_turn(const struct site_backoff *b, uint64_t now_ns)
{
	double elapsed = now_ns > b->since_ns ? (double)(now_ns - b->since_ns) : 0;

	/* Its first turn at a level comes at once; the next once the share has paid for it. */
	return b->turn_ns <= site_backoff__share(b) * elapsed;
}

void kbp_policy__next(struct kbp_plan *p, double share, double budget, unsigned int nregs,
		      unsigned int min_us, unsigned int max_us)
{
	double f = budget > 0 ? share / (0.7 * budget) : 1;
	double next = p->period_us;

	if (budget <= 0)
		return;
	if (share > budget) {
		if (p->period_us >= max_us && p->regs > 1) {
			p->regs--;
			return;
		}
		next = p->period_us * (f < 4 ? f : 4);
	} else if (share < budget / 2) {
		if (p->regs < nregs) {
			p->regs++;
			return;
		}
		next = p->period_us * (f > 0.25 ? f : 0.25);
	}
	next = next < min_us ? min_us : next > max_us ? max_us : next;
	p->period_us = (unsigned int)next;
}

uint64_t kbp_policy__timeout_ns(uint64_t period_ns, unsigned int ticks)
{
	uint64_t t = period_ns * ticks;
	uint64_t max = period_ns > KBP_MAX_TIMEOUT_NS ? period_ns : KBP_MAX_TIMEOUT_NS;

	return t < max ? t : max;
}

bool kbp_policy__due(unsigned int misses, uint64_t passes, size_t i)
{
	uint64_t every = 1ull << (misses < KBP_MAX_MISSES ? misses : KBP_MAX_MISSES);

	return (passes + i) % every == 0;
}

int kbp_policy__source(uint64_t spent_ns[KBP_SOURCES], const bool have[KBP_SOURCES])
{
	static const unsigned int share[KBP_SOURCES] = KBP_SHARE_PCT;
	/* Who wins a tie: the evidence first, the cycle last. */
	static const enum kbp_source order[KBP_SOURCES] = { KBP_LIVE, KBP_WARM, KBP_CYCLE };
	double level = 0;
	int best = -1;

	for (int t = 0; t < KBP_SOURCES; t++) {
		enum kbp_source s = order[t];
		double l = (double)spent_ns[s] / share[s];

		if (have[s] && (best < 0 || l < level)) {
			best = s;
			level = l;
		}
	}
	if (best < 0)
		return -1;
	for (int s = 0; s < KBP_SOURCES; s++)
		if (!have[s] && (double)spent_ns[s] / share[s] < level)
			spent_ns[s] = (uint64_t)(level * share[s]);
	return best;
}

enum kbp_linger kbp_policy__linger(uint64_t hits, uint64_t checks, uint64_t since_fire_ns,
				   uint64_t period_ns)
{
	if (checks >= KBP_LIVE_CHECKS)
		return KBP_LINGER_CHECKED;
	if (hits >= KBP_LIVE_TRAPS)
		return KBP_LINGER_TRAPS;
	if (since_fire_ns >= KBP_LIVE_LINGER * period_ns)
		return KBP_LINGER_TICKS;
	return KBP_LINGER_ON;
}

/* Fires a tick, or -1 while the site's placements held fewer than KBP_LIVE_LINGER ticks. */
static double fires_a_tick(uint64_t fires, uint64_t held_ns, uint64_t period_ns)
{
	if (!period_ns || held_ns < KBP_LIVE_LINGER * period_ns)
		return -1;
	return (double)fires * (double)period_ns / (double)held_ns;
}

double kbp_policy__weight(uint64_t fires, uint64_t held_ns, uint64_t period_ns)
{
	double r = fires_a_tick(fires, held_ns, period_ns);

	if (r < 0 || r >= 1)
		return 1;
	return r > KBP_WEIGHT_MIN ? r : KBP_WEIGHT_MIN;
}

bool kbp_policy__hot(uint64_t fires, uint64_t held_ns, uint64_t period_ns)
{
	return fires_a_tick(fires, held_ns, period_ns) >= 1;
}

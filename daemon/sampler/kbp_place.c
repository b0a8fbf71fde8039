// SPDX-License-Identifier: GPL-2.0-only
/*
 * Code-breakpoint sampling: placements, the lead's, after DataCollider.
 *
 * Register r samples one site at a time, the same on every CPU (a race
 * between two runs of the same code needs both), and keeps it until the
 * site fires (it ran, on any CPU) or its placement times out: a hot site
 * gives its register back at the next tick, a cold one keeps it long enough
 * to run.
 *
 * The cycle is reshuffled at each pass, so that two sites do not always
 * follow each other.  A site whose placements keep timing out (never runs
 * under this workload) is placed every 2nd, 4th, ... 64th pass only, so
 * that dead code costs the cycle less and live code comes round sooner; a
 * fire gives it every pass again.
 *
 * Evidence.  At subsystem scale the cycle is hours long and most of its
 * sites never run, so four fifths of the register time go where code runs
 * (kbp_policy__source's shares, by the time each source's placements held
 * a register): the warm queue holds the sites, not yet run, of each
 * function that a cpu-clock sample landed in (kip.c) or whose first site
 * fired (kbp_evidence.c); the live list holds every site that fired, each
 * placed again in turn, for the checks a race needs, with 60% of the time.
 * A site enters the warm queue once; one that times out there is left to
 * the cycle, which keeps a fifth of the time.
 *
 * Pinned sites (--pin).  Register 0 cycles over them alone, a struct
 * kbp_cycle of their own (cursor, passes and shuffle), so that each comes round every few
 * ticks however large the whole cycle is: what a test or a user needs
 * checked is checked, not left to a pass over 100,000 sites or to whether
 * a sample saw its function.  The other registers take the turns above
 * (which skip a site register 0 is on).  With one register in use, its
 * placements alternate between the pinned sites and the turns, so that
 * neither stops.  A pinned placement waits KBP_TIMEOUT_TICKS (it was named
 * as code that runs) and is not counted in the turns' sources.
 */
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kbp_int.h"
#include "kcsand.skel.h"
#include "util/clock.h"
#include "util/print.h"

void kbp_shuffle(struct kbp *k, uint32_t *order, size_t n)
{
	for (size_t i = n - 1; i > 0 && n; i--) {
		size_t j = ((size_t)rand_r(&k->seed) << 16 ^ rand_r(&k->seed)) % (i + 1);
		uint32_t t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
}

/* Traps and checks of register r's placement on site i so far, over every CPU on it. */
static void placement_sum(const struct kbp *k, unsigned int r, uint32_t i, uint64_t *hits,
			  uint64_t *checks)
{
	int fd = bpf_map__fd(k->skel->maps.kxbp_slots);
	struct kcsand_kxbp_slot s;

	*hits = *checks = 0;
	for (unsigned int c = 0; c < k->ncpus; c++) {
		__u32 key = (__u32)k->cpu[c].cpu * KCSAND_KXBP_SLOTS + r;

		if (!k->cpu[c].online || bpf_map_lookup_elem(fd, &key, &s))
			continue;
		/* A mover not yet moved still has the earlier site's counts. */
		if (s.ip == k->addr[i] && s.site == k->site[i]) {
			*hits += s.hits;
			*checks += s.checks;
		}
	}
}

/*
 * May site i take a register now?  Not refused, not on another register,
 * and, if its placements kept timing out, in one pass of 2^misses (each
 * site its own pass, by its index, so that dead sites do not all come back
 * at once).
 */
static bool free_site(const struct kbp *k, uint32_t i)
{
	if (k->seen[i] & SEEN_REFUSED)
		return false;
	for (unsigned int r = 0; r < k->nregs; r++)
		if (k->reg[r].gen && k->reg[r].i == i)
			return false;
	return true;
}

/* A pass over c is done: its order reshuffled for the next. */
static void new_pass(struct kbp *k, struct kbp_cycle *c)
{
	kbp_shuffle(k, c->order, c->n);
	c->passes++;
	/* debug (-vv): a run over a few cold sites can end once a pass is done. */
	if (c == &k->cycle)
		pr_debug("breakpoints: pass %llu over the %zu sites done, %.1f s in\n",
			 (unsigned long long)c->passes, c->n,
			 (clock__now_ns() - k->t0_ns) / 1e9);
}

/*
 * The next site of cycle c that may be placed, reshuffling at each pass; -1:
 * none.  A site's timeouts space its placements out in c's passes
 * (kbp_policy__due): a pinned site that never runs is placed less often in
 * the pinned cycle's passes, not the whole cycle's.
 */
static long cycle_next(struct kbp *k, struct kbp_cycle *c)
{
	for (size_t tries = 0; tries <= c->n; tries++) {
		uint64_t pos = c->cursor++;
		uint32_t i;

		if (pos && pos % c->n == 0)
			new_pass(k, c);
		i = c->order[pos % c->n];
		if (free_site(k, i) && kbp_policy__due(k->misses[i], c->passes, i))
			return i;
	}
	return -1;
}

/* The warm queue's next site that has still not run and is free; -1: none. */
static long next_warm(struct kbp *k)
{
	while (k->warm_head < k->warm_tail) {
		uint32_t i = k->warm[k->warm_head++ % k->n];

		if (!(k->seen[i] & SEEN_RAN) && free_site(k, i))
			return i;
	}
	return -1;
}

/* Does site i take this turn of a ring?  With its weight's probability (kbp.h). */
static bool weighed_in(struct kbp *k, uint32_t i)
{
	double w = kbp_policy__weight(k->fires[i], k->held_ns[i], k->period_ns);

	return w >= 1 || rand_r(&k->seed) < w * RAND_MAX;
}

/*
 * A ring's next free site, in turn, each by its weight; -1: none.  A site
 * that fired once and then timed out is placed every 2nd, 4th, ... pass
 * over the ring (kbp_policy__due), as in the cycle: code that ran at
 * start-up and no more would otherwise hold live's register time in
 * timeouts.  A site the weight passes over is taken when a whole round
 * passed over every other: the ring still has its turn.
 */
static long next_in_ring(struct kbp *k, const uint32_t *ring, size_t n, size_t *cur,
			 uint64_t *passes)
{
	long passed = -1;

	for (size_t t = 0; t <= n; t++) {
		uint64_t pos = (*cur)++;
		uint32_t i = ring[pos % n];

		if (pos && pos % n == 0)
			(*passes)++;
		if (!free_site(k, i) || !kbp_policy__due(k->misses[i], *passes, i))
			continue;
		if (weighed_in(k, i))
			return i;
		if (passed < 0)
			passed = i;
	}
	return passed;
}

/*
 * The live list's next site: every other one from the hot sites, those
 * that fire a tick or more (kbp_policy__hot).  A race needs checks of the
 * same hot code over and over (generic_fillattr's took about 2,000
 * placements of its 37 sites when pinned), and a round over every site
 * that ever fired gave each some ten placements in ten minutes.
 */
static long next_live(struct kbp *k)
{
	long i = -1;

	if (k->nhot && (k->hot_turn = !k->hot_turn))
		i = next_in_ring(k, k->hot, k->nhot, &k->hot_cur, &k->hot_passes);
	return i >= 0 ? i : next_in_ring(k, k->live, k->nlive, &k->live_cur, &k->live_passes);
}

/* The next placement's site and its source (kbp_policy__source); -1: none. */
static long choose_site(struct kbp *k, enum kbp_source *from)
{
	bool have[KBP_SOURCES] = { true, k->warm_head < k->warm_tail, k->nlive > 0 };

	for (;;) {
		int s = kbp_policy__source(k->spent_ns, have);
		long i;

		if (s < 0)
			return -1;
		i = s == KBP_CYCLE ? cycle_next(k, &k->cycle) : s == KBP_WARM ? next_warm(k) : next_live(k);
		if (i >= 0) {
			*from = s;
			return i;
		}
		have[s] = false;
	}
}

/*
 * Register r's next site, its source and whether it is a pinned placement:
 * register 0's from the pinned sites (see the top), else choose_site()'s
 * turns; -1: none.
 */
long kbp_next_for(struct kbp *k, unsigned int r, enum kbp_source *from, bool *pin)
{
	long i = -1;

	if (r == 0 && k->pin.n && (k->regs > 1 || (k->pin_turn = !k->pin_turn)))
		i = cycle_next(k, &k->pin);
	*pin = i >= 0;
	return i < 0 ? choose_site(k, from) : i;
}

/* Register r's placement ended at now: what it saw of its site, and what it held. */
static void end_placement(struct kbp *k, unsigned int r, uint64_t hits, uint64_t checks,
			  uint64_t now)
{
	uint32_t i = k->reg[r].i;
	struct kbp_tally *t = &k->tally;
	uint64_t held = now > k->reg[r].since_ns ? now - k->reg[r].since_ns : 0;

	t->placements++;
	t->capped += k->reg[r].capped;
	t->from[k->reg[r].from] += !k->reg[r].pin;
	/* A pinned placement is register 0's own, no source's: not in the shares. */
	k->spent_ns[k->reg[r].from] += k->reg[r].pin ? 0 : held;
	t->held_from[k->reg[r].from] += k->reg[r].pin ? 0 : held;
	t->held_ns += held;
	t->fired_ns += hits ? held : 0;
	/* Every placement measures its site's fires a second: its weight (kbp.h). */
	k->fires[i] += hits;
	k->held_ns[i] += held;
	if (hits) {
		t->fired++;
		t->fired_from[k->reg[r].from] += !k->reg[r].pin;
		k->misses[i] = 0;
		if (kbp_mark_site(k, i, SEEN_RAN)) {
			t->ran++;
			k->live[k->nlive++] = i;
			if (k->fns)
				kbp_warm_fn(k, k->fid[i]);	/* its function's other sites run too */
			t->pin_ran += !!(k->seen[i] & SEEN_PIN);
		}
	} else {
		t->timeouts++;
		if (k->misses[i] < KBP_MAX_MISSES)
			k->misses[i]++;	/* kbp_policy__due() places it less often */
	}
	/* A pinned placement is register 0's, not a turn of the rings: it does not judge. */
	if (!k->reg[r].pin && (k->seen[i] & SEEN_RAN) &&
	    kbp_policy__hot(k->fires[i], k->held_ns[i], k->period_ns) &&
	    kbp_mark_site(k, i, SEEN_HOT))
		k->hot[k->nhot++] = i;
	if (checks && kbp_mark_site(k, i, SEEN_CHECKED)) {
		t->checked++;
		t->pin_checked += !!(k->seen[i] & SEEN_PIN);
		pr_debug("breakpoints: 0x%llx checked for the first time, %.1f s in\n",
			 (unsigned long long)k->addr[i],
			 (clock__now_ns() - k->t0_ns) / 1e9);
	}
}

/*
 * Put register r on site i, from source `from` (the movers follow its
 * generation).  A site with no evidence of running waits fewer ticks.
 */
void kbp_place(struct kbp *k, unsigned int r, uint32_t i, enum kbp_source from, bool pin,
		  uint64_t now)
{
	bool known = pin || from != KBP_CYCLE || (k->seen[i] & (SEEN_RAN | SEEN_WARM));

	k->reg[r] = (struct kbp_reg){ .gen = ++k->gens, .i = i, .since_ns = now, .from = from,
				      .pin = pin,
				      .ticks = known ? KBP_TIMEOUT_TICKS : KBP_COLD_TICKS };
	k->tally.pin_placements += !!(k->seen[i] & SEEN_PIN);
	if (kbp_mark_site(k, i, SEEN_PLACED))
		k->sampled++;
}

/*
 * Is register r's placement over, at a tick?  When it timed out or its
 * site was refused; once it fired, at once for a site the cycle or warm
 * found (it is live from now on), while a live site's placement stays for
 * its checks, within a bound of ticks and of traps (kbp_policy__linger).
 * A move costs more than a check under emulation (2 to 2.5 ms in the test
 * guest: TCG flushes its translations), so a hot site that gave its
 * register back at the first fire had one or two checks a move.
 */
static bool placement_over(const struct kbp *k, struct kbp_reg *g, uint64_t hits,
			   uint64_t checks, uint64_t now)
{
	uint64_t timeout = kbp_policy__timeout_ns(k->period_ns, g->ticks);
	enum kbp_linger l;

	if (k->seen[g->i] & SEEN_REFUSED)
		return true;
	if (!hits || g->from != KBP_LIVE || g->pin)
		return hits || now - g->since_ns >= timeout;
	if (!g->fired_ns)
		g->fired_ns = now;
	l = kbp_policy__linger(hits, checks, now - g->fired_ns, k->period_ns);
	g->capped = l == KBP_LINGER_TRAPS;
	return l != KBP_LINGER_ON || now - g->since_ns >= timeout;
}

/*
 * The lead's tick, under lock: a register whose site fired (on any CPU)
 * or timed out, or was refused, moves on; the registers the budget took
 * away are parked.  True when a placement changed.
 */
bool kbp_schedule(struct kbp *k, uint64_t now)
{
	bool changed = false;

	for (unsigned int r = 0; r < k->nregs; r++) {
		struct kbp_reg *g = &k->reg[r];
		uint64_t hits = 0, checks = 0;
		enum kbp_source from = g->from;
		bool pin = g->pin;
		long i;

		if (g->gen)
			placement_sum(k, r, g->i, &hits, &checks);
		if (g->gen && r >= k->regs) {
			end_placement(k, r, hits, checks, now);
			g->gen = 0;
			changed = true;
			continue;
		}
		if (r >= k->regs || (g->gen && !placement_over(k, g, hits, checks, now)))
			continue;
		if (g->gen)
			end_placement(k, r, hits, checks, now);
		g->gen = 0;	/* its site may come round again at once in a small cycle */
		i = kbp_next_for(k, r, &from, &pin);
		changed = true;
		if (i < 0 && (k->seen[g->i] & SEEN_REFUSED))
			continue;	/* nothing left to place: parked */
		kbp_place(k, r, i < 0 ? g->i : (uint32_t)i, from, pin, now);
	}
	return changed;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Code-breakpoint sampling: what it says.  The coverage, evidence and
 * register-time lines (-v), once a minute and at the end, and the
 * summary's counters (kbp__stats).
 */
#include <stdio.h>
#include <string.h>
#include "kbp_int.h"
#include "util/clock.h"
#include "util/print.h"

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0;
}

/*
 * Where the registers' time went: on placements that fired (code that ran
 * while sampled: what finds races), and by source (their shares, kbp.h).
 */
static void print_register_time(const struct kbp *k, const char *when)
{
	const uint64_t *s = k->tally.held_from;
	uint64_t all = s[KBP_CYCLE] + s[KBP_WARM] + s[KBP_LIVE];

	pr_info("breakpoints: register time, %s: %.0f%% on placements that fired; by source "
		"the cycle %.0f%%, warm %.0f%%, live %.0f%% (%zu hot sites of %zu)\n", when,
		pct(k->tally.fired_ns, k->tally.held_ns), pct(s[KBP_CYCLE], all),
		pct(s[KBP_WARM], all), pct(s[KBP_LIVE], all), k->nhot, k->nlive);
}

/* How many sites ran and were checked, and what the placements did (info: -v). */
void kbp_print_coverage(struct kbp *k, const char *when)
{
	struct kbp_tally *t = &k->tally;

	pr_info("breakpoints: coverage, %s: %zu sites ran (+%zu), %zu checked (+%zu), of %zu; "
		"%llu placements, %llu fired, %llu timed out, %llu passes\n", when,
		(size_t)t->ran, t->ran - t->ran_then, (size_t)t->checked,
		t->checked - t->checked_then, k->n, (unsigned long long)t->placements,
		(unsigned long long)t->fired, (unsigned long long)t->timeouts,
		(unsigned long long)k->cycle.passes);
	pr_info("breakpoints: evidence, %s: %zu functions seen running (%llu IP samples); "
		"placements from the cycle %llu (%llu fired), warm %llu (%llu), live %llu (%llu)\n",
		when, t->warm_fns, (unsigned long long)t->ips,
		(unsigned long long)t->from[KBP_CYCLE], (unsigned long long)t->fired_from[KBP_CYCLE],
		(unsigned long long)t->from[KBP_WARM], (unsigned long long)t->fired_from[KBP_WARM],
		(unsigned long long)t->from[KBP_LIVE], (unsigned long long)t->fired_from[KBP_LIVE]);
	print_register_time(k, when);
	t->ran_then = t->ran;
	t->checked_then = t->checked;
	if (k->pin.n)
		pr_info("breakpoints: pinned sites, %s: %zu ran, %zu checked, of %zu; %llu "
			"placements\n", when, (size_t)t->pin_ran, (size_t)t->pin_checked, k->pin.n,
			(unsigned long long)t->pin_placements);
}

/* Once a minute (the lead): coverage grows as the cycle comes round. */
void kbp_coverage_minute(struct kbp *k, uint64_t now)
{
	struct kbp_tally *t = &k->tally;
	char when[32];

	if (!t->coverage_ns)
		t->coverage_ns = now;
	if (now - t->coverage_ns < KBP_COVERAGE_NS)
		return;
	t->coverage_ns = now;
	snprintf(when, sizeof(when), "minute %u", ++t->minute);
	kbp_print_coverage(k, when);
}

void kbp__stats(const struct kbp *k, struct kbp_stats *st)
{
	uint64_t ns;

	memset(st, 0, sizeof(*st));
	kbp_slots_sum(k, &st->hits, &st->checked, &ns);
	st->sites = k->n;
	st->sampled = k->sampled;
	st->refused = k->refused;
	st->nregs = k->nregs;
	st->cycles = k->cycle.passes;
	st->ran = k->tally.ran;
	st->checked_sites = k->tally.checked;
	st->placements = k->tally.placements;
	st->fired = k->tally.fired;
	st->timeouts = k->tally.timeouts;
	st->capped = k->tally.capped;
	st->period_us = k->period_ns / 1000;	/* one word, read without the lock */
	st->min_period_us = k->min_period_us;
	st->max_period_us = k->max_period_us;
	st->min_regs = k->min_regs;
	st->trap_ns = k->trap_ns;
	st->overhead = k->overhead_ppm / 1e6;
	st->elapsed_ns = clock__now_ns() - k->t0_ns;
	for (unsigned int c = 0; c < k->ncpus; c++) {
		st->retargets += k->cpu[c].moves;
		st->retarget_ns += k->cpu[c].move_ns;
		st->movers_cpu_ns += k->cpu[c].cpu_ns;
		st->pinned += k->cpu[c].pinned && k->cpu[c].online;
		st->ncpus += k->cpu[c].online;
	}
}

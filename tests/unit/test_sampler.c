// SPDX-License-Identifier: GPL-2.0-only
/*
 * The site sampler's policy (daemon/sampler/policy.c: sampler__choose,
 * hot_cycle__next, the per-site backoff), the kernel-mode bitmap words
 * (daemon/sampler/ksampler.c) and the code-breakpoint budget
 * (kbp_policy__next).
 */
#include <stdbool.h>
#include <stdint.h>
#include "test.h"
#include "sampler/kbp.h"
#include "sampler/ksampler.h"
#include "sampler/sampler.h"

#define N 8
/* A level0_ns that never ends level 0. */
#define NEVER	(1ULL << 62)

static int count(const uint8_t *armed)
{
	int c = 0;

	for (int i = 0; i < N; i++)
		c += armed[i];
	return c;
}

/* One period of the policy: cold set into armed, hot sites into hot, their time share. */
static double plan(const double *x, const bool *known, double budget, double turn_cost,
		   uint8_t *armed, uint8_t *hot)
{
	double share;

	sampler__choose(x, known, N, budget, turn_cost, armed, hot, &share);
	return share;
}

int main(void)
{
	TEST(unmeasured_sites_are_armed) {
		double x[N] = { 0 };
		bool known[N] = { 0 };
		uint8_t armed[N] = { 0 }, hot[N];

		plan(x, known, 0.1, 1, armed, hot);
		ASSERT_EQ(count(armed), N, "an unmeasured site is armed to learn its cost");
		ASSERT_EQ(count(hot), 0, "and is not hot");
	}
	TEST(cold_sites_stay_armed) {
		double x[N] = { 0, 0, 0.001, 0.002, 50, 50, 50, 50 };
		bool known[N] = { 1, 1, 1, 1, 1, 1, 1, 1 };
		uint8_t armed[N] = { 0 }, hot[N];

		plan(x, known, 0.1, 1, armed, hot);
		ASSERT_TRUE(armed[0] && armed[1] && armed[2] && armed[3],
			    "never-hit and rarely-hit sites are armed every period");
		ASSERT_TRUE(!armed[4] && !armed[5] && !armed[6] && !armed[7],
			    "hot sites are armed only in their turns");
		ASSERT_EQ(count(hot), 4, "the four expensive sites are hot");
	}
	TEST(hot_share_keeps_the_budget) {
		double x[N] = { 100, 100, 100, 100, 100, 100, 100, 100 };
		bool known[N] = { 1, 1, 1, 1, 1, 1, 1, 1 };
		uint8_t armed[N] = { 0 }, hot[N];
		double q = plan(x, known, 0.1, 1, armed, hot);

		/* 10%: turns in 1/11 of the time keep probes at 10% of native time. */
		ASSERT_TRUE(q > 0.0905 && q < 0.0913, "turns take 1/11 of the time");
		ASSERT_TRUE(plan(x, known, 0.1, 0.5, armed, hot) > 1.99 * q,
			    "a turn costing half the CPU: twice the time");
	}
	TEST(a_turn_that_cost_nothing_does_not_stop_turns) {
		double x[N] = { 100, 100, 100, 100, 100, 100, 100, 100 };
		bool known[N] = { 1, 1, 1, 1, 1, 1, 1, 1 };
		uint8_t armed[N] = { 0 }, hot[N];

		/* The cost comes from the turns taken: with no share, none is measured again. */
		ASSERT_TRUE(plan(x, known, 0.1, 0, armed, hot) == 1, "all the time, not none");
		ASSERT_TRUE(plan(x, known, 0.1, 0.01, armed, hot) == 1, "cheap turns: all the time");
	}
	TEST(every_hot_site_has_a_turn_each_cycle) {
		uint8_t hot[N] = { 1, 1, 1, 1, 1, 1, 1, 1 };
		struct hot_cycle c = { 0 };
		uint64_t rng = 7;
		int times[N] = { 0 };

		for (int turn = 0; turn < 4 * 100; turn++) {
			uint8_t armed[N] = { 0 };

			ASSERT_EQ((int)hot_cycle__next(&c, hot, N, 2, &rng, armed), 2,
				  "a turn arms two hot sites");
			for (int i = 0; i < N; i++)
				times[i] += armed[i];
			if (turn % 4 == 3)
				for (int i = 0; i < N; i++)
					ASSERT_EQ(times[i], (turn + 1) / 4,
						  "each hot site once in every 4 turns of 2");
		}
		hot_cycle__free(&c);
	}
	TEST(a_site_that_cooled_down_loses_its_turn) {
		uint8_t hot[N] = { 1, 1, 1, 1, 0, 0, 0, 0 };
		struct hot_cycle c = { 0 };
		uint64_t rng = 11;
		int times[N] = { 0 };

		for (int turn = 0; turn < 40; turn++) {
			uint8_t armed[N] = { 0 };

			if (turn == 1)
				hot[0] = 0;
			hot_cycle__next(&c, hot, N, 1, &rng, armed);
			for (int i = 0; i < N; i++)
				times[i] += armed[i];
		}
		ASSERT_TRUE(times[0] <= 1, "a site no longer hot is skipped");
		ASSERT_TRUE(times[4] + times[5] + times[6] + times[7] == 0, "cold sites never take turns");
		ASSERT_TRUE(times[1] >= 12 && times[2] >= 12 && times[3] >= 12,
			    "the remaining hot sites share the turns");
		hot_cycle__free(&c);
	}
	TEST(no_hot_site_no_turn) {
		uint8_t hot[N] = { 0 }, armed[N] = { 0 };
		struct hot_cycle c = { 0 };
		uint64_t rng = 3;

		ASSERT_EQ((int)hot_cycle__next(&c, hot, N, 2, &rng, armed), 0, "nothing to arm");
		hot_cycle__free(&c);
	}
	TEST(everything_fits) {
		double x[N] = { 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001 };
		bool known[N] = { 1, 1, 1, 1, 1, 1, 1, 1 };
		uint8_t armed[N] = { 0 }, hot[N];

		ASSERT_TRUE(plan(x, known, 1.0, 1, armed, hot) == 0, "no turns needed");
		ASSERT_EQ(count(armed), N, "a budget larger than the total arms all");
	}
	TEST(kernel_bitmap_disarms_what_is_neither_armed_nor_in_the_turn) {
		uint8_t armed[70], turn[70] = { 0 };

		memset(armed, 1, sizeof(armed));
		armed[3] = armed[5] = armed[64] = armed[69] = 0;
		turn[5] = 1;
		ASSERT_EQ(kbitmap__word(armed, turn, 70, 0), 1ULL << 3,
			  "site 3 disarmed, site 5 armed by its turn");
		ASSERT_EQ(kbitmap__word(armed, NULL, 70, 0), (1ULL << 3) | (1ULL << 5),
			  "without the turn, site 5 is disarmed too");
		ASSERT_EQ(kbitmap__word(armed, turn, 70, 1), (1ULL << 0) | (1ULL << 5),
			  "sites 64 and 69 in the second word");
		ASSERT_EQ(kbitmap__word(armed, turn, 66, 1), 1ULL << 0,
			  "sites from n on stay armed (a later object starts armed)");
		ASSERT_EQ(kbitmap__word(armed, turn, 70, 2), 0, "a word past n arms everything");
	}
	TEST(a_site_backs_off_a_level_per_backoff_hits) {
		struct site_backoff b = { 0 };

		ASSERT_TRUE(site_backoff__share(&b) == 1, "a new site is sampled in full");
		ASSERT_TRUE(!site_backoff__hit(&b, 199, 200, NEVER, 1000, 0), "199 of 200: still level 0");
		ASSERT_TRUE(site_backoff__hit(&b, 1, 200, NEVER, 2000, 0), "the 200th hit backs it off");
		ASSERT_EQ(b.level, 1, "to level 1");
		ASSERT_TRUE(site_backoff__share(&b) == 0.1, "10% at level 1");
		ASSERT_EQ(b.since_ns, 2000, "the level starts at the hit that reached it");
		ASSERT_TRUE(!site_backoff__hit(&b, 1999, 200, NEVER, 2500, 0), "level 1 takes ten times as many");
		ASSERT_TRUE(site_backoff__hit(&b, 50000, 200, NEVER, 3000, 0), "a burst of hits");
		ASSERT_EQ(b.level, 2, "moves one level only, so the next one is sampled too");
		ASSERT_TRUE(site_backoff__share(&b) == 0.01, "1% at level 2");
		site_backoff__hit(&b, 20000, 200, NEVER, 4000, 0);
		ASSERT_TRUE(site_backoff__share(&b) == 0.001, "0.1% at level 3");
		ASSERT_TRUE(!site_backoff__hit(&b, 1000000, 200, NEVER, 5000, 0), "level 3 is the last");
		ASSERT_EQ(b.level, 3, "and stays");
	}
	TEST(level_0_ends_after_cpu_time_from_the_first_hit) {
		struct site_backoff b = { 0 };
		const uint64_t ms = 1000000, l0 = 2000 * ms;

		ASSERT_TRUE(!site_backoff__hit(&b, 0, 200, l0, 0, 5000 * ms),
			    "not hit yet: level 0, however long the targets have run");
		ASSERT_TRUE(!site_backoff__hit(&b, 10, 200, l0, 0, 6000 * ms),
			    "first hits: its clock starts at the targets' CPU time now");
		ASSERT_TRUE(!site_backoff__level0_over(&b, l0, 7900 * ms),
			    "1900 CPU-ms later: still level 0");
		ASSERT_TRUE(site_backoff__level0_over(&b, l0, 8000 * ms),
			    "2000 CPU-ms later: level 0 is over");
		ASSERT_TRUE(site_backoff__hit(&b, 10, 200, l0, 0, 8000 * ms),
			    "with 20 hits of 200, by time");
		ASSERT_EQ(b.level, 1, "to level 1");
		ASSERT_TRUE(!site_backoff__hit(&b, 10, 200, l0, 0, 90000 * ms),
			    "the time limit is level 0's only");
	}
	TEST(the_cold_start_spends_a_credit_the_budget_refills) {
		const double ms = 1e6;
		double c = 200 * ms;

		ASSERT_TRUE(!cold_credit__charge(&c, 200 * ms, 0.1, 0, 150 * ms),
			    "150 of 200 ms spent: credit left");
		ASSERT_TRUE(c == 50 * ms, "50 ms of it");
		ASSERT_TRUE(!cold_credit__charge(&c, 200 * ms, 0.1, 1000 * ms, 0),
			    "1 s of the program's own time at 10% earns 100 ms");
		ASSERT_TRUE(c == 150 * ms, "150 ms now");
		ASSERT_TRUE(!cold_credit__charge(&c, 200 * ms, 0.1, 10000 * ms, 0),
			    "a long quiet stretch");
		ASSERT_TRUE(c == 200 * ms, "keeps no more than the start value");
		ASSERT_TRUE(cold_credit__charge(&c, 200 * ms, 0.1, 100 * ms, 300 * ms),
			    "300 ms of traps in 100 ms of work: out");
		ASSERT_TRUE(c == 0, "the overdraft is not carried");
		ASSERT_TRUE(!cold_credit__charge(&c, 200 * ms, 0.1, 100 * ms, 0),
			    "and it earns again from 0");
	}
	TEST(a_demoted_site_is_the_budgets) {
		struct site_backoff b = { 0 };

		site_backoff__hit(&b, 10, 30000, 2000000000ull, 0, 0);
		site_backoff__demote(&b, 5000);
		ASSERT_EQ(b.level, 1, "level 0 ended by the credit: level 1");
		ASSERT_EQ(b.since_ns, 5000, "from now");
		ASSERT_TRUE(site_backoff__share(&b) == 0.1, "10% of the time in turns");
		b.level = 2;
		site_backoff__demote(&b, 6000);
		ASSERT_EQ(b.level, 2, "a site past level 0 stays where it is");
	}
	TEST(a_backed_off_site_takes_turns_within_its_share) {
		struct site_backoff b = { .level = 1, .since_ns = 0 };
		const uint64_t ms = 1000000;

		ASSERT_TRUE(site_backoff__may_turn(&b, 0), "a level's first turn comes at once");
		b.turn_ns = 20 * ms;
		ASSERT_TRUE(!site_backoff__may_turn(&b, 100 * ms),
			    "20 ms of turns in 100 ms is over 10%");
		ASSERT_TRUE(site_backoff__may_turn(&b, 200 * ms), "in 200 ms, 10%: another turn");
		b.level = 3;
		ASSERT_TRUE(!site_backoff__may_turn(&b, 10000 * ms), "0.1%: not within 10 s");
		ASSERT_TRUE(site_backoff__may_turn(&b, 20000 * ms), "but within 20 s");
	}
	TEST(level_0_sites_are_armed_outside_the_budget) {
		/* What sampler.c passes as known: measured and past level 0. */
		double x[N] = { 100, 100, 100, 100, 100, 100, 100, 100 };
		bool ready[N] = { 0, 0, 1, 1, 1, 1, 1, 1 };
		uint8_t armed[N] = { 0 }, hot[N];

		plan(x, ready, 0.1, 1, armed, hot);
		ASSERT_TRUE(armed[0] && armed[1], "sites at level 0 stay armed, however hot");
		ASSERT_EQ(count(armed), 2, "the hot sites past level 0 are not");
		ASSERT_EQ(count(hot), 6, "they take turns");
	}
	TEST(breakpoints_over_budget_lengthen_the_period_by_at_most_4x) {
		struct kbp_plan p = { .period_us = 10000, .regs = 3 };

		kbp_policy__next(&p, 0.14, 0.10, 3, 2000, 1000000);
		ASSERT_EQ(p.period_us, 20000, "14% against 10%: aim at 7%, twice the period");
		ASSERT_EQ(p.regs, 3, "registers stay while the period can grow");
		kbp_policy__next(&p, 5.0, 0.10, 3, 2000, 1000000);
		ASSERT_EQ(p.period_us, 80000, "far over: 4x at most per second");
	}
	TEST(breakpoints_within_budget_keep_their_plan) {
		struct kbp_plan p = { .period_us = 10000, .regs = 3 };

		kbp_policy__next(&p, 0.07, 0.10, 3, 2000, 1000000);
		ASSERT_EQ(p.period_us, 10000, "between half the budget and the budget: kept");
		kbp_policy__next(&p, 5.0, 0, 3, 2000, 1000000);
		ASSERT_EQ(p.period_us, 10000, "budget 0 (--sample-period): fixed");
	}
	TEST(breakpoints_at_the_longest_period_give_up_registers_not_below_one) {
		struct kbp_plan p = { .period_us = 1000000, .regs = 3 };

		kbp_policy__next(&p, 0.5, 0.10, 3, 2000, 1000000);
		ASSERT_EQ(p.regs, 2, "the period is at its longest: one register fewer");
		kbp_policy__next(&p, 0.5, 0.10, 3, 2000, 1000000);
		kbp_policy__next(&p, 0.5, 0.10, 3, 2000, 1000000);
		ASSERT_EQ(p.regs, 1, "never none");
		ASSERT_EQ(p.period_us, 1000000, "and the period stays at its longest");
	}
	TEST(breakpoints_under_half_the_budget_take_registers_back_first) {
		struct kbp_plan p = { .period_us = 1000000, .regs = 1 };

		kbp_policy__next(&p, 0.01, 0.10, 3, 2000, 1000000);
		kbp_policy__next(&p, 0.01, 0.10, 3, 2000, 1000000);
		ASSERT_EQ(p.regs, 3, "registers back, one a call");
		ASSERT_EQ(p.period_us, 1000000, "before the period shortens");
		kbp_policy__next(&p, 0.0, 0.10, 3, 2000, 1000000);
		ASSERT_EQ(p.period_us, 250000, "then 4x shorter at most");
		for (int i = 0; i < 10; i++)
			kbp_policy__next(&p, 0.0, 0.10, 3, 2000, 1000000);
		ASSERT_EQ(p.period_us, 2000, "down to the shortest");
	}
	TEST(breakpoint_placements_time_out_after_32_ticks_and_4_s_at_most) {
		const unsigned int t = KBP_TIMEOUT_TICKS;

		ASSERT_EQ(kbp_policy__timeout_ns(10000000, t), 320000000, "10 ms tick: 320 ms");
		ASSERT_EQ(kbp_policy__timeout_ns(100000000, t), 3200000000ull, "100 ms tick: 3.2 s");
		ASSERT_EQ(kbp_policy__timeout_ns(1000000000, t), 4000000000ull, "1 s tick: 4 s, not 32");
		ASSERT_EQ(kbp_policy__timeout_ns(5000000000ull, t), 5000000000ull, "never below a tick");
		ASSERT_EQ(kbp_policy__timeout_ns(10000000, KBP_COLD_TICKS), 80000000,
			  "no evidence of running: 8 ticks");
	}
	TEST(breakpoint_live_linger_ends_at_its_checks_its_ticks_or_its_traps) {
		const uint64_t tick = 10000000;

		ASSERT_EQ(kbp_policy__linger(20, 3, 2 * tick, tick), KBP_LINGER_ON,
			  "a few checks, a few traps, two ticks: it stays for its checks");
		ASSERT_EQ(kbp_policy__linger(20, KBP_LIVE_CHECKS, tick, tick), KBP_LINGER_CHECKED,
			  "all its checks: over");
		ASSERT_EQ(kbp_policy__linger(KBP_LIVE_TRAPS, 2, tick, tick), KBP_LINGER_TRAPS,
			  "a site that traps on every run while its checks wait: over at the cap");
		ASSERT_EQ(kbp_policy__linger(KBP_LIVE_TRAPS - 1, 2, tick, tick), KBP_LINGER_ON,
			  "below the cap it stays");
		ASSERT_EQ(kbp_policy__linger(KBP_LIVE_TRAPS * 10, KBP_LIVE_CHECKS, tick, tick),
			  KBP_LINGER_CHECKED, "its checks taken: counted as checked, not capped");
		ASSERT_EQ(kbp_policy__linger(5, 1, KBP_LIVE_LINGER * tick, tick), KBP_LINGER_TICKS,
			  "a site that runs seldom: over after the linger's ticks");
		/* The budget's longer tick lengthened the linger, not the traps' bound. */
		ASSERT_EQ(kbp_policy__linger(KBP_LIVE_TRAPS, 1, 0, 1000000000ull), KBP_LINGER_TRAPS,
			  "at a 1 s tick the traps still end it");
	}
	TEST(breakpoint_weight_is_a_sites_fires_a_tick_up_to_one) {
		const uint64_t tick = 10000000;

		ASSERT_TRUE(kbp_policy__weight(0, 7 * tick, tick) == 1,
			    "held less than the linger's ticks: unmeasured, placed to measure it");
		ASSERT_TRUE(kbp_policy__weight(8, 8 * tick, tick) == 1, "a fire a tick: weight 1");
		ASSERT_TRUE(kbp_policy__weight(2, 8 * tick, tick) == 0.25,
			    "a fire every 4 ticks: placed a quarter of its turns");
		ASSERT_TRUE(kbp_policy__weight(5000, 8 * tick, tick) == 1,
			    "faster: still 1, its extra fires are traps, not checks");
		ASSERT_TRUE(kbp_policy__weight(1, 1000 * tick, tick) == KBP_WEIGHT_MIN,
			    "once in 1,000 ticks: the floor, it still comes round");
		ASSERT_TRUE(kbp_policy__weight(2, 80 * tick, 10 * tick) == 0.25,
			    "in ticks of the period in use: 2 fires in 8 ticks of 100 ms");
	}
	TEST(breakpoint_hot_ring_by_fires_a_tick_not_by_one_placements_checks) {
		const uint64_t tick = 10000000;

		/* kern14's rule wanted KBP_LIVE_CHECKS checks in one placement: the trap bound
		 * ended this one at 64 traps with 2, so a site that runs every 0.15 ms was never hot. */
		ASSERT_TRUE(kbp_policy__hot(KBP_LIVE_TRAPS * 8, 8 * tick, tick),
			    "64 traps a tick over 8 ticks: hot");
		ASSERT_TRUE(kbp_policy__hot(8, 8 * tick, tick), "a fire a tick: hot");
		ASSERT_TRUE(!kbp_policy__hot(7, 8 * tick, tick), "less than a fire a tick: not hot");
		ASSERT_TRUE(!kbp_policy__hot(64, 7 * tick, tick),
			    "held less than the linger's ticks: not judged yet");
		ASSERT_TRUE(!kbp_policy__hot(0, 0, 0), "no period: not judged");
	}
	TEST(breakpoint_register_time_goes_where_code_runs_and_the_cycle_keeps_a_share) {
		const bool all[KBP_SOURCES] = { true, true, true };
		/* What a placement holds, in ticks: a cold timeout, warm's mix, a live fire. */
		const uint64_t held[KBP_SOURCES] = { 8, 24, 2 };
		uint64_t spent[KBP_SOURCES] = { 0 }, n[KBP_SOURCES] = { 0 };

		for (int pick = 0; pick < 10000; pick++) {
			int s = kbp_policy__source(spent, all);

			n[s]++;
			spent[s] += held[s];
		}
		uint64_t sum = spent[KBP_CYCLE] + spent[KBP_WARM] + spent[KBP_LIVE];

		ASSERT_TRUE(spent[KBP_LIVE] * 100 / sum >= 59 && spent[KBP_LIVE] * 100 / sum <= 61,
			    "the sites that fired: 60% of the register time");
		ASSERT_TRUE(spent[KBP_CYCLE] * 100 / sum >= 19 && spent[KBP_CYCLE] * 100 / sum <= 21,
			    "the cycle keeps a fifth: every site comes round");
		ASSERT_TRUE(n[KBP_LIVE] > 10 * n[KBP_CYCLE],
			    "a live fire is short: many more placements than the cycle's");
	}
	TEST(breakpoint_sources_with_nothing_bank_no_time) {
		const bool cycle_only[KBP_SOURCES] = { true, false, false };
		const bool all[KBP_SOURCES] = { true, true, true };
		const bool none[KBP_SOURCES] = { false, false, false };
		uint64_t spent[KBP_SOURCES] = { 0 };
		int live = 0;

		for (int pick = 0; pick < 100; pick++) {
			ASSERT_EQ(kbp_policy__source(spent, cycle_only), KBP_CYCLE,
				  "no evidence: every turn the cycle's");
			spent[KBP_CYCLE] += 8;
		}
		/* Live's first sites come: it catches up with its share, not with 800 ticks. */
		for (int pick = 0; pick < 20; pick++) {
			int s = kbp_policy__source(spent, all);

			live += s == KBP_LIVE;
			spent[s] += s == KBP_CYCLE ? 8 : 2;
		}
		ASSERT_TRUE(live < 20, "the cycle still has turns once live has sites");
		ASSERT_EQ(kbp_policy__source(spent, none), -1, "nothing to place");
	}
	TEST(breakpoint_sites_that_time_out_come_round_less_often) {
		unsigned int due[KBP_MAX_MISSES + 2] = { 0 };

		for (unsigned int m = 0; m <= KBP_MAX_MISSES + 1; m++)
			for (uint64_t pass = 0; pass < 128; pass++)
				due[m] += kbp_policy__due(m, pass, 5);
		ASSERT_EQ(due[0], 128, "no timeout: every pass");
		ASSERT_EQ(due[1], 64, "one: every 2nd");
		ASSERT_EQ(due[3], 16, "three: every 8th");
		ASSERT_EQ(due[KBP_MAX_MISSES], 2, "six: every 64th");
		ASSERT_EQ(due[KBP_MAX_MISSES + 1], 2, "and never less often");
		ASSERT_TRUE(kbp_policy__due(1, 0, 1) != kbp_policy__due(1, 0, 2),
			    "two dead sites in different passes");
	}
	return test_summary();
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The history's sync-probe pacing (history/pace.c): a program that
 * synchronizes rarely is traced from start to end; one whose sync probes
 * cost more than the budget has them taken off, and back on once its own
 * work has earned the credit; over a long run their cost stays near the
 * budget; a budget of 100% never takes them off.
 */
#include "test.h"
#include "history/history.h"

#define MS 1e6

int main(void)
{
	struct hb_pace p;
	double native, cost, on_cost;
	int pauses, resumes;

	TEST(rare_sync_never_paused) {
		hb_pace__init(&p);
		native = cost = 0;
		pauses = 0;
		/* 60 s of work, 1 ms of sync probes per second. */
		for (int i = 0; i < 600; i++) {
			native += 100 * MS;
			cost += 0.1 * MS;
			pauses += hb_pace__step(&p, native, cost, 0.10) == HB_PACE_PAUSE;
		}
		ASSERT_EQ(pauses, 0, "pauses");
	}
	TEST(short_program_traced_in_full) {
		/* 40 ms of sync probes before the first tick fit the start credit. */
		hb_pace__init(&p);
		ASSERT_EQ(hb_pace__step(&p, 0, 40 * MS, 0.10), HB_PACE_KEEP, "first 40 ms");
		ASSERT_EQ(hb_pace__step(&p, 10 * MS, 45 * MS, 0.10), HB_PACE_KEEP, "at exit");
	}
	TEST(the_start_credit_is_an_advance) {
		hb_pace__init(&p);
		ASSERT_EQ(hb_pace__step(&p, 10 * MS, 110 * MS, 0.10), HB_PACE_PAUSE,
			  "110 ms of probes in the first 10 ms: off");
		ASSERT_EQ(hb_pace__step(&p, 600 * MS, 110 * MS, 0.10), HB_PACE_KEEP,
			  "60 ms earned: still paying back the 100 ms advance (a gift: back on)");
		ASSERT_EQ(hb_pace__step(&p, 1200 * MS, 110 * MS, 0.10), HB_PACE_KEEP,
			  "120 ms earned, 110 spent: 10 ms of credit, short of a window");
		ASSERT_EQ(hb_pace__step(&p, 1300 * MS, 110 * MS, 0.10), HB_PACE_RESUME,
			  "130 ms earned: 20 ms, a window's worth, back on");
	}
	TEST(heavy_sync_paced_to_budget) {
		hb_pace__init(&p);
		native = cost = on_cost = 0;
		pauses = resumes = 0;
		/*
		 * Ticks of 10 ms on 2 threads: while on, the probes take 90% of
		 * the CPU; while off, none of it.
		 */
		for (int i = 0; i < 100000; i++) {
			double step = p.off ? 0 : 0.9 * 20 * MS;

			native += p.off ? 20 * MS : 2 * MS;
			cost += step;
			on_cost += step;
			switch (hb_pace__step(&p, native, cost, 0.10)) {
			case HB_PACE_PAUSE:
				pauses++;
				break;
			case HB_PACE_RESUME:
				resumes++;
				break;
			case HB_PACE_KEEP:
				break;
			}
		}
		ASSERT_TRUE(pauses > 100, "taken off many times");
		ASSERT_TRUE(resumes >= pauses - 1, "and put back each time");
		/* The probes' cost, per unit of the program's own work, near the 10% budget. */
		ASSERT_TRUE(on_cost / native > 0.08 && on_cost / native < 0.12,
			    "cost within the budget");
		printf("     heavy sync: %d pauses, probe cost %.3f of native\n", pauses,
		       on_cost / native);
	}
	TEST(full_budget_never_pauses) {
		hb_pace__init(&p);
		ASSERT_EQ(hb_pace__step(&p, 1 * MS, 500 * MS, 1.0), HB_PACE_KEEP, "100%");
		p.off = true;
		ASSERT_EQ(hb_pace__step(&p, 2 * MS, 900 * MS, 1.0), HB_PACE_RESUME,
			  "back on when raised to 100%");
	}
	return test_summary();
}

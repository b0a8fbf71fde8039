// SPDX-License-Identifier: GPL-2.0-only
/* The site sampler's policy (daemon/sampler.c: sampler_choose). */
#include <stdbool.h>
#include <stdint.h>
#include "test.h"
#include "sampler.h"

#define N 8

static int count(const uint8_t *armed)
{
	int c = 0;

	for (int i = 0; i < N; i++)
		c += armed[i];
	return c;
}

int main(void)
{
	TEST(unmeasured_sites_are_armed) {
		double x[N] = { 0 };
		bool known[N] = { 0 }, turn;
		uint8_t armed[N] = { 0 };
		uint64_t rng = 1;

		sampler_choose(x, known, N, 0.1, 1, &rng, armed, &turn);
		ASSERT_EQ(count(armed), N, "an unmeasured site is armed to learn its cost");
	}
	TEST(cold_sites_stay_armed) {
		double x[N] = { 0, 0, 0.001, 0.002, 50, 50, 50, 50 };
		bool known[N] = { 1, 1, 1, 1, 1, 1, 1, 1 }, turn;
		uint64_t rng = 42;

		for (int round = 0; round < 50; round++) {
			uint8_t armed[N] = { 0 };

			sampler_choose(x, known, N, 0.1, 1, &rng, armed, &turn);
			ASSERT_TRUE(armed[0] && armed[1] && armed[2] && armed[3],
				    "never-hit and rarely-hit sites are armed every period");
		}
	}
	TEST(hot_sites_take_turns_within_budget) {
		double x[N] = { 100, 100, 100, 100, 100, 100, 100, 100 };
		bool known[N] = { 1, 1, 1, 1, 1, 1, 1, 1 }, turn;
		int times[N] = { 0 }, rounds = 10000, turns = 0;
		uint64_t rng = 7;

		for (int round = 0; round < rounds; round++) {
			uint8_t armed[N] = { 0 };

			sampler_choose(x, known, N, 0.1, 1, &rng, armed, &turn);
			ASSERT_EQ(count(armed), turn ? 2 : 0, "a hot turn arms two hot sites");
			turns += turn;
			for (int i = 0; i < N; i++)
				times[i] += armed[i];
		}
		/* 10%: a turn in 1/11 of the periods keeps probes at 10% of native time. */
		ASSERT_TRUE(turns > rounds * 0.08 && turns < rounds * 0.10, "turns within budget");
		for (int i = 0; i < N; i++)
			ASSERT_TRUE(times[i] > turns / 6 && times[i] < turns / 3,
				    "every hot site gets its turn, a quarter of them");
	}
	TEST(cheaper_turns_come_more_often) {
		double x[N] = { 100, 100, 100, 100, 100, 100, 100, 100 };
		bool known[N] = { 1, 1, 1, 1, 1, 1, 1, 1 }, turn;
		int turns = 0;
		uint64_t rng = 9;

		for (int round = 0; round < 10000; round++) {
			uint8_t armed[N] = { 0 };

			sampler_choose(x, known, N, 0.1, 0.5, &rng, armed, &turn);
			turns += turn;
		}
		ASSERT_TRUE(turns > 1650 && turns < 1980, "a turn costing half the CPU: twice as often");
	}
	TEST(everything_fits) {
		double x[N] = { 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001 };
		bool known[N] = { 1, 1, 1, 1, 1, 1, 1, 1 }, turn;
		uint8_t armed[N] = { 0 };
		uint64_t rng = 3;

		sampler_choose(x, known, N, 1.0, 1, &rng, armed, &turn);
		ASSERT_EQ(count(armed), N, "a budget larger than the total arms all");
	}
	return test_summary();
}

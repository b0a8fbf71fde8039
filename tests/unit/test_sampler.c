// SPDX-License-Identifier: GPL-2.0-only
/* The site sampler's policy (daemon/sampler.c: sampler_choose). */
#include <stdbool.h>
#include <stdint.h>
#include "test.h"
#include "sampler.h"

#define N 8

static double armed_load(const double *load, const uint8_t *armed, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += armed[i] ? load[i] : 0;
	return s;
}

int main(void)
{
	TEST(unmeasured_sites_are_armed) {
		double load[N] = { 0 };
		bool known[N] = { 0 };
		uint8_t armed[N] = { 0 };
		uint64_t rng = 1;

		sampler_choose(load, known, N, 0.0, &rng, armed);
		for (int i = 0; i < N; i++)
			ASSERT_EQ(armed[i], 1, "an unmeasured site is armed to learn its load");
	}
	TEST(cold_sites_stay_armed) {
		double load[N] = { 0, 0, 0.001, 0.002, 5, 5, 5, 5 };
		bool known[N] = { 1, 1, 1, 1, 1, 1, 1, 1 };
		uint64_t rng = 42;

		for (int round = 0; round < 50; round++) {
			uint8_t armed[N] = { 0 };

			sampler_choose(load, known, N, 0.1, &rng, armed);
			ASSERT_TRUE(armed[0] && armed[1] && armed[2] && armed[3],
				    "never-hit and rarely-hit sites are armed every period");
		}
	}
	TEST(hot_sites_take_turns_within_budget) {
		double load[N] = { 1, 1, 1, 1, 1, 1, 1, 1 }, sum = 0;
		bool known[N] = { 1, 1, 1, 1, 1, 1, 1, 1 };
		int times[N] = { 0 }, rounds = 4000;
		uint64_t rng = 7;

		for (int round = 0; round < rounds; round++) {
			uint8_t armed[N] = { 0 };

			sum += sampler_choose(load, known, N, 0.8, &rng, armed);
			ASSERT_EQ(sum, sum, "load is a number");
			for (int i = 0; i < N; i++)
				times[i] += armed[i];
			ASSERT_TRUE(armed_load(load, armed, N) <= N, "sanity");
		}
		/* 0.8 of 8 units: each site armed a tenth of the time, on average. */
		ASSERT_TRUE(sum / rounds > 0.7 && sum / rounds < 0.9, "average load near the budget");
		for (int i = 0; i < N; i++)
			ASSERT_TRUE(times[i] > rounds / 20 && times[i] < rounds / 6,
				    "every hot site gets its turn");
	}
	TEST(everything_fits) {
		double load[N] = { 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01 };
		bool known[N] = { 1, 1, 1, 1, 1, 1, 1, 1 };
		uint8_t armed[N] = { 0 };
		uint64_t rng = 3;

		sampler_choose(load, known, N, 1.0, &rng, armed);
		for (int i = 0; i < N; i++)
			ASSERT_EQ(armed[i], 1, "a budget larger than the total arms all");
	}
	return test_summary();
}

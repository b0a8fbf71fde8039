// SPDX-License-Identifier: GPL-2.0-only
/*
 * The duty cap of kcsand's real-time threads (util/thread.h): a thread that
 * works within a quarter of its window goes on; one that works on rests
 * three times its work, so that a SCHED_FIFO mover or armer never holds its
 * CPU to the kernel's RT throttling, however long its steps are.
 */
#include "test.h"
#include "util/thread.h"

#define MS 1000000ull

/* A thread that works `work` ns of CPU a step and waits `wait` ns between steps, for `secs`. */
static void run(uint64_t work, uint64_t wait, unsigned int secs, uint64_t *cpu, uint64_t *wall,
		uint64_t *longest)
{
	struct thread_duty d = { 0 };
	uint64_t now = 0, c = 0, stretch = 0;

	*longest = 0;
	while (now < secs * 1000 * MS) {
		uint64_t rest;

		now += work;
		c += work;
		stretch += work;
		rest = thread__duty_rest_ns(&d, now, c);
		if (stretch > *longest)
			*longest = stretch;
		if (rest || wait)
			stretch = 0;
		now += rest + wait;
	}
	*cpu = c;
	*wall = now;
}

int main(void)
{
	struct thread_duty d;
	uint64_t cpu, wall, longest;

	TEST(light_work_within_the_window_goes_on) {
		d = (struct thread_duty){ 0 };
		ASSERT_EQ(thread__duty_rest_ns(&d, 50 * MS, 10 * MS), 0, "10 ms in 50 ms");
		ASSERT_EQ(d.t0_ns, 0, "the window goes on");
	}
	TEST(an_idle_window_ends_with_no_rest) {
		d = (struct thread_duty){ 0 };
		ASSERT_EQ(thread__duty_rest_ns(&d, 150 * MS, 5 * MS), 0, "5 ms in 150 ms");
		ASSERT_EQ(d.t0_ns, 150 * MS, "a new window from now");
		ASSERT_EQ(d.cpu0_ns, 5 * MS, "counting from the CPU time now");
	}
	TEST(a_busy_thread_rests_three_times_its_work) {
		d = (struct thread_duty){ 0 };
		ASSERT_EQ(thread__duty_rest_ns(&d, 25 * MS, 25 * MS), 75 * MS,
			  "25 ms of CPU in 25 ms: 75 ms of rest");
		ASSERT_EQ(d.t0_ns, 100 * MS, "the next window after the rest");
		ASSERT_EQ(d.rests, 1, "a rest counted");
	}
	TEST(a_late_burst_rests_what_exceeds_the_share) {
		d = (struct thread_duty){ 0 };
		ASSERT_EQ(thread__duty_rest_ns(&d, 100 * MS, 30 * MS), 20 * MS,
			  "30 ms in 100 ms: 120 ms in all");
	}
	TEST(a_thread_that_never_sleeps_takes_a_quarter) {
		/* A 2 ms tick whose work took 2 ms under emulation: the lead mover of p15. */
		run(2 * MS, 0, 60, &cpu, &wall, &longest);
		ASSERT_TRUE(cpu * 100 <= wall * THREAD_DUTY_SHARE_PCT, "CPU share at most 25%");
		ASSERT_TRUE(cpu * 100 >= wall * (THREAD_DUTY_SHARE_PCT - 1), "and not starved");
		ASSERT_TRUE(longest <= 26 * MS, "no stretch over a quarter window and a step");
	}
	TEST(long_steps_still_rest_their_share) {
		/* 40 ms steps: one step already exceeds the window's share. */
		run(40 * MS, 0, 60, &cpu, &wall, &longest);
		ASSERT_TRUE(cpu * 100 <= wall * THREAD_DUTY_SHARE_PCT, "CPU share at most 25%");
		ASSERT_TRUE(longest <= 40 * MS, "one step at a time");
	}
	TEST(a_paced_thread_is_never_held) {
		/* 1 ms of work every 10 ms (10%): the cap never bites. */
		run(1 * MS, 9 * MS, 60, &cpu, &wall, &longest);
		ASSERT_EQ(wall, 60 * 1000 * MS, "no rest added");
	}
	return test_summary();
}

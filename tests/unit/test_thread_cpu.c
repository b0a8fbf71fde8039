// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-CPU teardown's thread helpers (util/thread.h): kcsand closes a
 * CPU's perf events from a thread on that CPU, so that the close is a local
 * call and not an IPI the CPU may never answer, and waits for that thread a
 * bounded time, so that a CPU that does not run it is said, not waited for;
 * and opens a CPU's events from the CPU too (the visit).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include "test.h"
#include "util/thread.h"

struct where {
	int cpu;		/* where fn ran */
	bool pinned;		/* and whether it was pinned there */
	unsigned int sleep_ms;
};

static void note_cpu(void *arg)
{
	struct where *w = arg;

	usleep(w->sleep_ms * 1000);
	w->pinned = thread__on_cpu(sched_getcpu());
	__atomic_store_n(&w->cpu, sched_getcpu(), __ATOMIC_RELEASE);
}

static void *sleeper(void *arg)
{
	usleep(*(unsigned int *)arg * 1000);
	return NULL;
}

/* The last CPU this process may run on: not always 0, so that "pinned to 0" is not luck. */
static int last_allowed_cpu(void)
{
	cpu_set_t set;
	int last = -1;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			last = c;
	return last;
}

int main(void)
{
	static struct where w;	/* static: a run that timed out may still write it */
	int cpu = last_allowed_cpu();
	unsigned int ms = 300;
	pthread_t t;
	cpu_set_t all;

	sched_getaffinity(0, sizeof(all), &all);
	TEST(an_unpinned_thread_is_not_on_one_cpu) {
		if (CPU_COUNT(&all) > 1)
			ASSERT_FALSE(thread__on_cpu(sched_getcpu()), "allowed on every CPU");
		ASSERT_FALSE(thread__on_cpu(-1), "no CPU -1");
	}
	TEST(run_on_runs_pinned_on_the_cpu) {
		w = (struct where){ .cpu = -1 };
		ASSERT_EQ(thread__run_on(cpu, note_cpu, &w, 5000), 0, "ran within 5 s");
		ASSERT_EQ(w.cpu, cpu, "on the CPU asked for");
		ASSERT_TRUE(w.pinned, "pinned there from the start");
	}
	TEST(run_on_a_cpu_not_there_fails) {
		ASSERT_EQ(thread__run_on(CPU_SETSIZE - 1, note_cpu, &w, 1000), -EINVAL,
			  "no such CPU: EINVAL, nothing run");
	}
	TEST(run_on_is_bounded) {
		w = (struct where){ .cpu = -1, .sleep_ms = 500 };
		ASSERT_EQ(thread__run_on(cpu, note_cpu, &w, 50), -ETIMEDOUT,
			  "fn takes 500 ms, waited 50");
		/* Up to 5 s: a loaded CI machine may be slow to run it. */
		for (int i = 0; i < 50 && __atomic_load_n(&w.cpu, __ATOMIC_ACQUIRE) < 0; i++)
			usleep(100 * 1000);
		ASSERT_EQ(w.cpu, cpu, "and it still ran, later");
	}
	TEST(visit_moves_the_caller_and_restore_gives_its_cpus_back) {
		cpu_set_t saved;

		/* kbp's start and hotplug open a CPU's events from the CPU itself (kbp_visit). */
		ASSERT_EQ(thread__save_cpus(&saved), 0, "its CPUs saved");
		ASSERT_EQ(thread__visit_cpu(cpu), 0, "moved");
		ASSERT_EQ(sched_getcpu(), cpu, "back from the call on the CPU asked for");
		ASSERT_TRUE(thread__on_cpu(cpu), "and on it alone");
		ASSERT_TRUE(thread__visit_cpu(CPU_SETSIZE - 1) < 0, "no such CPU: an error");
		ASSERT_TRUE(thread__on_cpu(cpu), "and the thread stays where it was");
		ASSERT_EQ(thread__restore_cpus(&saved), 0, "its CPUs back");
		if (CPU_COUNT(&all) > 1)
			ASSERT_FALSE(thread__on_cpu(sched_getcpu()), "allowed on every CPU again");
	}
	TEST(join_within_is_bounded) {
		pthread_create(&t, NULL, sleeper, &ms);
		ASSERT_EQ(thread__join_within(t, 20), -ETIMEDOUT, "300 ms thread, 20 ms wait");
		ASSERT_EQ(thread__join_within(t, 5000), 0, "then joined");
	}
	return test_summary();
}

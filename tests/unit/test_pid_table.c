// SPDX-License-Identifier: GPL-2.0-only
/*
 * util/pid_table.h: entries found by pid, created once, taken out one by one
 * or by a walk that frees them as it goes, and a reaped process told apart
 * from a live one.
 */
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include "test.h"
#include "util/pid_table.h"

struct proc {
	struct pid_entry entry;
	int value;
};

static int freed;

static bool drop_odd(struct pid_entry *e, void *arg)
{
	if (!(e->pid & 1))
		return false;
	free(e);
	freed++;
	return true;
}

static bool drop_all(struct pid_entry *e, void *arg)
{
	free(e);
	freed++;
	return true;
}

int main(void)
{
	struct pid_table t = { 0 };
	struct proc *p, *q;

	TEST(get_creates_once) {
		p = (struct proc *)pid_table__get(&t, 42, sizeof(*p));
		ASSERT_TRUE(p != NULL, "an entry");
		ASSERT_EQ(p->entry.pid, 42, "its pid");
		ASSERT_EQ(p->value, 0, "the rest zeroed");
		p->value = 7;
		q = (struct proc *)pid_table__get(&t, 42, sizeof(*q));
		ASSERT_TRUE(q == p, "the same entry the second time");
		ASSERT_EQ(q->value, 7, "as it was left");
		ASSERT_TRUE(pid_table__find(&t, 42) == &p->entry, "found");
		ASSERT_TRUE(pid_table__find(&t, 42 + PID_TABLE_BUCKETS) == NULL,
			    "a pid of the same bucket is not it");
	}
	TEST(same_bucket_apart) {
		q = (struct proc *)pid_table__get(&t, 42 + PID_TABLE_BUCKETS, sizeof(*q));
		ASSERT_TRUE(q && q != p, "a second entry in the bucket");
		ASSERT_TRUE(pid_table__find(&t, 42) == &p->entry, "the first still found");
		ASSERT_TRUE(pid_table__take(&t, 42) == &p->entry, "taken out");
		ASSERT_TRUE(pid_table__find(&t, 42) == NULL, "gone from the table");
		ASSERT_TRUE(pid_table__find(&t, 42 + PID_TABLE_BUCKETS) == &q->entry, "the other stays");
		ASSERT_TRUE(pid_table__take(&t, 42) == NULL, "nothing to take twice");
		free(p);
	}
	TEST(each_takes_out_what_it_frees) {
		for (pid_t pid = 1; pid <= 1000; pid++)
			ASSERT_TRUE(pid_table__get(&t, pid, sizeof(struct proc)) != NULL, "get");
		freed = 0;
		ASSERT_EQ(pid_table__each(&t, drop_odd, NULL), 500, "the odd pids taken out");
		ASSERT_EQ(freed, 500, "and freed");
		ASSERT_TRUE(pid_table__find(&t, 3) == NULL, "an odd pid is gone");
		ASSERT_TRUE(pid_table__find(&t, 4) != NULL, "an even one stays");
		freed = 0;
		/* The even ones of 1..1000, 42 + PID_TABLE_BUCKETS (298) among them. */
		ASSERT_EQ(pid_table__each(&t, drop_all, NULL), 500, "the rest");
		ASSERT_EQ(freed, 500, "all freed");
		for (unsigned int b = 0; b < PID_TABLE_BUCKETS; b++)
			ASSERT_TRUE(t.bucket[b] == NULL, "an empty table");
	}
	TEST(gone_after_reaped) {
		pid_t child = fork();

		if (!child)
			_exit(0);
		ASSERT_FALSE(pid__gone(getpid()), "this process is alive");
		ASSERT_TRUE(child > 0 && waitpid(child, NULL, 0) == child, "the child reaped");
		ASSERT_TRUE(pid__gone(child), "a reaped child is gone");
	}
	return test_summary();
}

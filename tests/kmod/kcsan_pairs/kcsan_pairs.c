// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsan_pairs: races at real rates, for measuring what kcsand's kernel
 * mode reports with both stacks (tests/vm/kernel-pairs.sh,
 * bench/kernel/p13-kernel-pairs.sh), in the style of the kernel's own
 * kernel/kcsan/kcsan_test.c: one scenario at a time, each a pair of
 * kernel threads on two different CPUs, each racing access alone in a
 * small noinline function so that a report names it.
 *
 * Unlike tests/kmod/kcsan_race, whose threads race in tight loops, these
 * threads sleep between accesses (usleep_range: hrtimers), so that a race
 * is as rare as in a real driver: a writer at 1, 10 or 100 Hz against a
 * reader at 1 kHz.  A soft watchpoint alone (KCSAN's, or kcsand's kprobes)
 * catches such a pair only when the write lands inside the reader's stall
 * of ~80 µs; a data breakpoint during the stall catches it when the reader
 * runs inside the writer's stall too.
 *
 *   echo N > /sys/module/kcsan_pairs/parameters/scenario
 *   echo 1 > /sys/module/kcsan_pairs/parameters/run     (0 stops)
 *
 * Scenarios (every one a race KCSAN reports with its defaults, but 5):
 *
 *   1 rate1    kcsan_pairs_rate_write at 1 Hz   vs kcsan_pairs_rate_read at 1 kHz
 *   2 rate10   kcsan_pairs_rate_write at 10 Hz  vs kcsan_pairs_rate_read at 1 kHz
 *   3 rate100  kcsan_pairs_rate_write at 100 Hz vs kcsan_pairs_rate_read at 1 kHz
 *   4 same     kcsan_pairs_same_write at 100 Hz, always the same value, vs
 *              kcsan_pairs_same_read at 1 kHz: no value ever changes (KCSAN's
 *              report_value_change_only drops it; DataCollider reports it)
 *   5 ww       kcsan_pairs_ww_write_a at 100 Hz vs kcsan_pairs_ww_write_b at
 *              1 kHz, aligned word writes of different values: KCSAN takes
 *              both for atomic (assume_plain_writes_atomic) and reports nothing;
 *              kcsand's breakpoint mode watches a sampled one (its data
 *              breakpoint catches the other)
 *   6 marked   kcsan_pairs_marked_write (WRITE_ONCE) at 100 Hz vs
 *              kcsan_pairs_plain_read (plain) at 1 kHz: plain against marked,
 *              which KCSAN reports (needs the .ko's DWARF to see the mark)
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched.h>

/* Keep each racing access a real, separate call: no inlining, no IPA. */
#define RACE_FN noinline __attribute__((__noipa__))

/* Aligned words: one per scenario, apart, so that scenarios never share a line. */
static u64 rate_var __aligned(64);
static u64 same_var __aligned(64);
static u64 marked_var __aligned(64);
/*
 * Not static: nothing in the module reads it, and the compiler drops every
 * store to a static variable that nothing reads, which left scenario 5's
 * two functions empty (no race to find) until December 2026.
 */
u64 kcsan_pairs_ww_var __aligned(64);

RACE_FN void kcsan_pairs_rate_write(u64 v)
{
	rate_var = v;
}

RACE_FN u64 kcsan_pairs_rate_read(void)
{
	return rate_var;
}

RACE_FN void kcsan_pairs_same_write(void)
{
	same_var = 1;
}

RACE_FN u64 kcsan_pairs_same_read(void)
{
	return same_var;
}

RACE_FN void kcsan_pairs_ww_write_a(u64 v)
{
	kcsan_pairs_ww_var = v;
}

RACE_FN void kcsan_pairs_ww_write_b(u64 v)
{
	kcsan_pairs_ww_var = v;
}

RACE_FN void kcsan_pairs_marked_write(u64 v)
{
	WRITE_ONCE(marked_var, v);
}

RACE_FN u64 kcsan_pairs_plain_read(void)
{
	return marked_var;
}

static unsigned int scenario = 3;
module_param(scenario, uint, 0644);
MODULE_PARM_DESC(scenario, "the scenario the next run starts (1-6, see the source)");

static atomic64_t accesses[2];	/* by the slow side (0) and the 1 kHz side (1) */

/* The side's period in µs, and its access, for each scenario. */
struct side {
	unsigned int period_us;
	u64 (*access)(u64 i);
};

static u64 rate_w(u64 i) { kcsan_pairs_rate_write(i); return 0; }
static u64 rate_r(u64 i) { return kcsan_pairs_rate_read(); }
static u64 same_w(u64 i) { kcsan_pairs_same_write(); return 0; }
static u64 same_r(u64 i) { return kcsan_pairs_same_read(); }
static u64 ww_a(u64 i) { kcsan_pairs_ww_write_a(i << 1); return 0; }
static u64 ww_b(u64 i) { kcsan_pairs_ww_write_b(i << 1 | 1); return 0; }
static u64 marked_w(u64 i) { kcsan_pairs_marked_write(i); return 0; }
static u64 plain_r(u64 i) { return kcsan_pairs_plain_read(); }

static const struct side sides[][2] = {
	[1] = { { 1000000, rate_w }, { 1000, rate_r } },
	[2] = { { 100000, rate_w }, { 1000, rate_r } },
	[3] = { { 10000, rate_w }, { 1000, rate_r } },
	[4] = { { 10000, same_w }, { 1000, same_r } },
	[5] = { { 10000, ww_a }, { 1000, ww_b } },
	[6] = { { 10000, marked_w }, { 1000, plain_r } },
};

static int side_fn(void *arg)
{
	long which = (long)arg;
	const struct side *s = &sides[scenario][which];
	u64 i, sum = 0;

	for (i = 1; !kthread_should_stop(); i++) {
		sum += s->access(i);
		atomic64_inc(&accesses[which]);
		usleep_range(s->period_us, s->period_us + s->period_us / 20);
	}
	pr_debug("kcsan_pairs: side %ld: %llu accesses (sum %llu)\n", which, i - 1, sum);
	return 0;
}

static DEFINE_MUTEX(run_lock);
static struct task_struct *threads[2];

static void stop_threads(void)
{
	for (int i = 0; i < 2; i++) {
		if (threads[i])
			kthread_stop(threads[i]);
		threads[i] = NULL;
	}
}

/* The two sides on two different CPUs, when there are two: a race needs both at once. */
static int start_threads(void)
{
	if (scenario < 1 || scenario >= ARRAY_SIZE(sides))
		return -EINVAL;
	for (long i = 0; i < 2; i++) {
		struct task_struct *t = kthread_create(side_fn, (void *)i, "kcsan_pairs/%u.%ld",
						       scenario, i);

		if (IS_ERR(t)) {
			stop_threads();
			return PTR_ERR(t);
		}
		kthread_bind(t, i % num_online_cpus());
		threads[i] = t;
	}
	atomic64_set(&accesses[0], 0);
	atomic64_set(&accesses[1], 0);
	wake_up_process(threads[0]);
	wake_up_process(threads[1]);
	return 0;
}

static int run_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int err = kstrtobool(val, &on);

	if (err)
		return err;
	mutex_lock(&run_lock);
	stop_threads();
	if (on)
		err = start_threads();
	mutex_unlock(&run_lock);
	return err;
}

static int run_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", threads[0] != NULL);
}

static const struct kernel_param_ops run_ops = { .set = run_set, .get = run_get };
module_param_cb(run, &run_ops, NULL, 0644);
MODULE_PARM_DESC(run, "1: start the scenario's two threads (again); 0: stop them");

/* "SLOW FAST": the accesses of each side since the last start. */
static int accesses_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lld %lld\n", (long long)atomic64_read(&accesses[0]),
			  (long long)atomic64_read(&accesses[1]));
}

static const struct kernel_param_ops accesses_ops = { .get = accesses_get };
module_param_cb(accesses, &accesses_ops, NULL, 0444);
MODULE_PARM_DESC(accesses, "accesses of the slow and the 1 kHz side since the last start");

static int __init kcsan_pairs_init(void)
{
	return 0;
}

static void __exit kcsan_pairs_exit(void)
{
	mutex_lock(&run_lock);
	stop_threads();
	mutex_unlock(&run_lock);
}

module_init(kcsan_pairs_init);
module_exit(kcsan_pairs_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Races at real rates, for kcsand's kernel-mode pair tests");

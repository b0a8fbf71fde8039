// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsan_race: a kernel module with deliberate data races, modelled on the
 * cases of the kernel's own KCSAN tests (kernel/kcsan/kcsan_test.c), for
 * testing kcsand's kernel mode in a VM (tests/vm/kcsan-vm).
 *
 * At load time one or two kernel threads per selected scenario are created
 * and sleep.  Nothing races until "1" is written to the `run` parameter:
 * probes can be attached while the code is idle.  Each thread then runs
 * `iters` iterations (cond_resched() in every one, so the kernel never sees
 * a stall) and goes back to sleep; `busy` counts the threads still working,
 * so a workload waits for it to drop to 0.  Writing `run` again starts
 * another round.  Unloading stops every thread and the timer.
 *
 *   echo 1 > /sys/module/kcsan_race/parameters/run
 *   while [ "$(cat /sys/module/kcsan_race/parameters/busy)" != 0 ]; do sleep 0.1; done
 *
 * Every racing access sits alone in a small noinline function with a
 * readable name, so reports and probe specs can name it.  Scenarios (bit
 * numbers of the `scenarios` mask; "race" = a data race KCSAN reports,
 * "none" = a negative control that must stay silent):
 *
 *   0 plain    race  kcsan_race_writer      vs kcsan_race_reader       (plain write vs plain read)
 *   1 rmw      race  kcsan_race_rmw_inc     on both sides              (x[i]++ over an array)
 *   2 origin   race  kcsan_race_hidden_writer vs kcsan_race_origin_reader
 *                    (exclude the writer from the probe spec: "unknown origin")
 *   3 ww       race  kcsan_race_ww_writer_a vs kcsan_race_ww_writer_b  (word-sized plain writes)
 *   4 atomic   race  kcsan_race_atomic_inc  vs kcsan_race_plain_atomic_reader
 *                    (locked write vs plain read)
 *   5 atomic2  none  kcsan_race_atomic_inc2 on both sides              (atomic_inc vs atomic_inc)
 *   6 locked   none  kcsan_race_locked_inc  on both sides              (spinlock-protected counter)
 *   7 percpu   none  kcsan_race_percpu_inc  on both sides              (per-CPU data, this CPU only)
 *   8 irq      race  kcsan_race_timer_write (from the hrtimer callback
 *                    kcsan_race_timer_writer, hardirq) vs kcsan_race_irq_reader;
 *                    the reader runs at least until the timer fired
 *                    `timer_min_fires` times (10 s at most)
 *
 * Marked accesses (KCSAN's rules; on x86 all of these reads and writes are
 * plain movs, only atomic_inc() has a lock prefix, so kcsand needs the
 * module's DWARF and source to see them as marked):
 *
 *   9 once     none  kcsan_race_once_writer (WRITE_ONCE) vs kcsan_race_once_reader (READ_ONCE)
 *  10 aread    none  kcsan_race_atomic_inc3 (atomic_inc) vs kcsan_race_atomic_reader (atomic_read)
 *  11 onceplain none kcsan_race_plain_writer (plain word write) vs kcsan_race_once_plain_reader
 *                    (READ_ONCE): the marked read never watches and the aligned plain write
 *                    is assumed atomic; with assume_plain_writes_atomic=0 and
 *                    report_value_change_only=0 the write watches and KCSAN reports the
 *                    READ_ONCE as "read (marked)"
 *  12 datarace none  kcsan_race_dr_writer (plain word write) vs kcsan_race_dr_reader
 *                    (data_race()): never watched, never reported
 */
#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

/* Keep each racing access a real, separate call: no inlining, no IPA. */
#define RACE_FN noinline __attribute__((__noipa__))

#define NR_SCENARIOS 13
#define RMW_LEN 8

static unsigned int scenarios = (1U << NR_SCENARIOS) - 1;
module_param(scenarios, uint, 0444);
MODULE_PARM_DESC(scenarios, "bit mask of scenarios to create threads for (default: all)");

/*
 * Which scenarios a round runs (bit mask).  Running one scenario at a time
 * keeps its two threads on the two vCPUs together: with every scenario at
 * once, a pair rarely runs at the same moment on a 2-CPU guest.
 */
static unsigned int round_mask = ~0U;
module_param(round_mask, uint, 0644);
MODULE_PARM_DESC(round_mask, "bit mask of the scenarios the next round runs (default: all)");

static unsigned int iters = 20000;
module_param(iters, uint, 0644);
MODULE_PARM_DESC(iters, "iterations per thread and round");

static unsigned int timer_us = 100;
module_param(timer_us, uint, 0644);
MODULE_PARM_DESC(timer_us, "period of the racing hrtimer in microseconds");

static unsigned int timer_min_fires = 50;
module_param(timer_min_fires, uint, 0644);
MODULE_PARM_DESC(timer_min_fires, "the irq scenario's reader runs until the timer fired this often (10 s at most)");

static unsigned int timer_fires;
module_param(timer_fires, uint, 0444);
MODULE_PARM_DESC(timer_fires, "how often the racing hrtimer fired, all rounds");

static atomic_t busy = ATOMIC_INIT(0);
static unsigned int generation;
static DECLARE_WAIT_QUEUE_HEAD(run_wq);
static unsigned int nr_threads;

/* ---- shared data ---- */
long kcsan_race_var;
long kcsan_race_array[RMW_LEN];
long kcsan_race_origin_var;
unsigned long kcsan_race_word;
atomic_t kcsan_race_atomic_var = ATOMIC_INIT(0);
atomic_t kcsan_race_atomic2_var = ATOMIC_INIT(0);
long kcsan_race_locked_var;
static DEFINE_SPINLOCK(kcsan_race_lock);
static DEFINE_PER_CPU(long, kcsan_race_pcpu);
long kcsan_race_irq_var;
long kcsan_race_once_var;
atomic_t kcsan_race_aread_var = ATOMIC_INIT(0);
long kcsan_race_onceplain_var;
long kcsan_race_dr_var;

static struct hrtimer race_timer;
static bool timer_active;

/* ---- the racing accesses ---- */
RACE_FN void kcsan_race_writer(long v)         { kcsan_race_var = v; }
RACE_FN long kcsan_race_reader(void)           { return kcsan_race_var; }

RACE_FN void kcsan_race_rmw_inc(unsigned int i) { kcsan_race_array[i % RMW_LEN]++; }

/* The writer of scenario 2 has its own name so a probe spec can leave it out. */
RACE_FN void kcsan_race_hidden_writer(long v)  { kcsan_race_origin_var = v; }
RACE_FN long kcsan_race_origin_reader(void)    { return kcsan_race_origin_var; }

RACE_FN void kcsan_race_ww_writer_a(unsigned long v) { kcsan_race_word = v; }
RACE_FN void kcsan_race_ww_writer_b(unsigned long v) { kcsan_race_word = ~v; }

RACE_FN void kcsan_race_atomic_inc(void)       { atomic_inc(&kcsan_race_atomic_var); }
RACE_FN int kcsan_race_plain_atomic_reader(void) { return kcsan_race_atomic_var.counter; }

RACE_FN void kcsan_race_atomic_inc2(void)      { atomic_inc(&kcsan_race_atomic2_var); }

RACE_FN void kcsan_race_locked_inc(void)
{
	spin_lock(&kcsan_race_lock);
	kcsan_race_locked_var++;
	spin_unlock(&kcsan_race_lock);
}

RACE_FN void kcsan_race_percpu_inc(void)
{
	long *p = get_cpu_ptr(&kcsan_race_pcpu);

	(*p)++;				/* plain, but only this CPU's copy */
	this_cpu_inc(kcsan_race_pcpu);	/* %gs-relative */
	put_cpu_ptr(&kcsan_race_pcpu);
}

RACE_FN void kcsan_race_timer_write(long v)    { kcsan_race_irq_var = v; }
RACE_FN long kcsan_race_irq_reader(void)       { return kcsan_race_irq_var; }

/*
 * Marked accesses, one statement per line: kcsand judges a site by the
 * source at its line and column.
 */
RACE_FN void kcsan_race_once_writer(long v)
{
	WRITE_ONCE(kcsan_race_once_var, v);
}

RACE_FN long kcsan_race_once_reader(void)
{
	return READ_ONCE(kcsan_race_once_var);
}

RACE_FN void kcsan_race_atomic_inc3(void)
{
	atomic_inc(&kcsan_race_aread_var);
}

RACE_FN int kcsan_race_atomic_reader(void)
{
	return atomic_read(&kcsan_race_aread_var);
}

RACE_FN void kcsan_race_plain_writer(long v)
{
	kcsan_race_onceplain_var = v;
}

RACE_FN long kcsan_race_once_plain_reader(void)
{
	return READ_ONCE(kcsan_race_onceplain_var);
}

RACE_FN void kcsan_race_dr_writer(long v)
{
	kcsan_race_dr_var = v;
}

RACE_FN long kcsan_race_dr_reader(void)
{
	return data_race(kcsan_race_dr_var);
}

static enum hrtimer_restart kcsan_race_timer_writer(struct hrtimer *t)
{
	kcsan_race_timer_write(ktime_get_ns());
	WRITE_ONCE(timer_fires, timer_fires + 1);
	if (!READ_ONCE(timer_active))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime((u64)(READ_ONCE(timer_us) ?: 1) * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

/* ---- threads ---- */
struct race_thread {
	struct task_struct *task;
	int scenario;
	int side;
};

static struct race_thread *threads;

/*
 * Sides of each scenario that finished their iterations this round.  A side
 * keeps going until its partner has finished too: a probed side runs far
 * slower than an unprobed one (scenario 2's hidden writer), and two sides
 * only race while both run.
 */
static atomic_t sides_done[NR_SCENARIOS];

static unsigned int scenario_sides(int scenario)
{
	unsigned int i, n = 0;

	for (i = 0; i < nr_threads; i++)
		if (threads[i].scenario == scenario)
			n++;
	return n;
}
static volatile long sink;

static void race_one(int scenario, int side, unsigned int i)
{
	switch (scenario) {
	case 0:
		if (side)
			sink += kcsan_race_reader();
		else
			kcsan_race_writer(i);
		break;
	case 1:
		kcsan_race_rmw_inc(i);
		break;
	case 2:
		if (side)
			sink += kcsan_race_origin_reader();
		else
			kcsan_race_hidden_writer(i);
		break;
	case 3:
		if (side)
			kcsan_race_ww_writer_b(i);
		else
			kcsan_race_ww_writer_a(i);
		break;
	case 4:
		if (side)
			sink += kcsan_race_plain_atomic_reader();
		else
			kcsan_race_atomic_inc();
		break;
	case 5:
		kcsan_race_atomic_inc2();
		break;
	case 6:
		kcsan_race_locked_inc();
		break;
	case 7:
		kcsan_race_percpu_inc();
		break;
	case 8:
		sink += kcsan_race_irq_reader();
		break;
	case 9:
		if (side)
			sink += kcsan_race_once_reader();
		else
			kcsan_race_once_writer(i);
		break;
	case 10:
		if (side)
			sink += kcsan_race_atomic_reader();
		else
			kcsan_race_atomic_inc3();
		break;
	case 11:
		if (side)
			sink += kcsan_race_once_plain_reader();
		else
			kcsan_race_plain_writer(i);
		break;
	case 12:
		if (side)
			sink += kcsan_race_dr_reader();
		else
			kcsan_race_dr_writer(i);
		break;
	}
}

static void arm_race_timer(void *unused)
{
	hrtimer_start(&race_timer, ns_to_ktime((u64)(timer_us ?: 1) * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED);
}

/*
 * The irq scenario's reader is bound to the last CPU and the timer armed,
 * pinned, on CPU 0: a watcher stalls with interrupts off (kprobes run in
 * int3 context), so a timer on the reader's own CPU could only fire after
 * each stall, never during it.
 */
static void start_race_timer(void)
{
	if (num_online_cpus() > 1)
		smp_call_function_single(0, arm_race_timer, NULL, 1);
	else
		arm_race_timer(NULL);
}

static int race_thread_fn(void *arg)
{
	struct race_thread *rt = arg;
	unsigned int seen = 0;

	while (!kthread_should_stop()) {
		unsigned int i, n, fires0 = 0, min_fires = 0;
		unsigned long deadline;

		wait_event_interruptible(run_wq, READ_ONCE(generation) != seen ||
					 kthread_should_stop());
		if (kthread_should_stop())
			break;
		seen = READ_ONCE(generation);
		if (!(READ_ONCE(round_mask) & (1U << rt->scenario)))
			continue;	/* not in this round: not counted in busy */
		n = READ_ONCE(iters);
		deadline = jiffies + 10 * HZ;
		if (rt->scenario == 8) {
			/* Timer ticks may be coarse: run until it fired often enough. */
			fires0 = READ_ONCE(timer_fires);
			min_fires = READ_ONCE(timer_min_fires);
			WRITE_ONCE(timer_active, true);
			start_race_timer();
		}
		for (i = 0; !kthread_should_stop(); i++) {
			if (i == n)
				atomic_inc(&sides_done[rt->scenario]);
			if (i >= n && READ_ONCE(timer_fires) - fires0 >= min_fires &&
			    atomic_read(&sides_done[rt->scenario]) >= scenario_sides(rt->scenario))
				break;
			if (i >= n && time_after(jiffies, deadline))
				break;
			race_one(rt->scenario, rt->side, i);
			cond_resched();
		}
		if (rt->scenario == 8) {
			WRITE_ONCE(timer_active, false);
			hrtimer_cancel(&race_timer);
		}
		atomic_dec(&busy);
	}
	return 0;
}

static unsigned int round_threads(void)
{
	unsigned int i, n = 0, mask = READ_ONCE(round_mask);

	for (i = 0; i < nr_threads; i++)
		if (mask & (1U << threads[i].scenario))
			n++;
	return n;
}

/* `run`: writing a non-zero value starts a round in the threads of round_mask. */
static int run_set(const char *val, const struct kernel_param *kp)
{
	unsigned int i;
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	if (!on)
		return 0;
	if (atomic_read(&busy))
		return -EBUSY;
	for (i = 0; i < NR_SCENARIOS; i++)
		atomic_set(&sides_done[i], 0);
	atomic_set(&busy, round_threads());
	WRITE_ONCE(generation, generation + 1);
	wake_up_all(&run_wq);
	return 0;
}

static int run_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(generation));
}

static const struct kernel_param_ops run_ops = { .set = run_set, .get = run_get };
module_param_cb(run, &run_ops, NULL, 0644);
MODULE_PARM_DESC(run, "write 1 to start a round; reads back the number of rounds started");

static int busy_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&busy));
}

static const struct kernel_param_ops busy_ops = { .get = busy_get };
module_param_cb(busy, &busy_ops, NULL, 0444);
MODULE_PARM_DESC(busy, "threads still running the current round");

static const char *const scenario_names[NR_SCENARIOS] = {
	"plain", "rmw", "origin", "ww", "atomic", "atomic2", "locked", "percpu", "irq",
	"once", "aread", "onceplain", "datarace",
};

static void stop_threads(void)
{
	unsigned int i;

	for (i = 0; i < nr_threads; i++)
		if (threads[i].task)
			kthread_stop(threads[i].task);
	hrtimer_cancel(&race_timer);
	kfree(threads);
	threads = NULL;
	nr_threads = 0;
}

static int __init kcsan_race_init(void)
{
	unsigned int s, n = 0;

	threads = kcalloc(2 * NR_SCENARIOS, sizeof(*threads), GFP_KERNEL);
	if (!threads)
		return -ENOMEM;
	hrtimer_init(&race_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	race_timer.function = kcsan_race_timer_writer;

	for (s = 0; s < NR_SCENARIOS; s++) {
		/* Scenario 8's other side is the timer. */
		int side, sides = (s == 8) ? 1 : 2;

		if (!(scenarios & (1U << s)))
			continue;
		for (side = 0; side < sides; side++) {
			struct race_thread *rt = &threads[n];
			struct task_struct *t;

			rt->scenario = s;
			rt->side = (s == 8) ? 1 : side;
			t = kthread_create(race_thread_fn, rt, "kcsan_race/%s%d",
					   scenario_names[s], side);
			if (IS_ERR(t)) {
				nr_threads = n;
				stop_threads();
				return PTR_ERR(t);
			}
			/* Off CPU 0, where the racing timer is armed (start_race_timer). */
			if (s == 8 && num_online_cpus() > 1)
				kthread_bind(t, num_online_cpus() - 1);
			wake_up_process(t);
			rt->task = t;
			n++;
			nr_threads = n;
		}
	}
	pr_info("kcsan_race: %u threads ready (scenarios 0x%x, %u iterations)\n",
		nr_threads, scenarios, iters);
	return 0;
}

static void __exit kcsan_race_exit(void)
{
	stop_threads();
	pr_info("kcsan_race: unloaded\n");
}

module_init(kcsan_race_init);
module_exit(kcsan_race_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Deliberate data races for testing kcsand's kernel mode");

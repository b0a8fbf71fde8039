/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A per-CPU helper thread's setup: pinned to its CPU, so that what it does
 * to that CPU's perf events are local calls, and SCHED_FIFO, so that a busy
 * workload cannot starve it.  Kernel breakpoint mode's armers (hw/pair.c)
 * and movers (sampler/kbp_mover.c) both need it, and each says in its own words
 * what a failure costs it.
 *
 * SCHED_FIFO also means nothing of lower class takes the CPU back from such
 * a thread while it runs: one that runs on (a 2 ms tick whose work takes a
 * millisecond under emulation, say) holds its CPU until the kernel's RT
 * throttling stops every real-time thread at 95% of a second, and the
 * workload, kcsand's own heartbeat and the kernel's normal-class threads
 * wait meanwhile.  So every such thread rests by construction (the duty
 * cap): once it has used THREAD_DUTY_SHARE_PCT of a THREAD_DUTY_WINDOW_NS
 * window in CPU time, or the window is over, it sleeps until its use is that
 * share of the time since the window began.  Two capped threads a CPU (a
 * mover and an armer) then take at most half of it, and none holds it
 * longer than a quarter window and one step of its work.
 */
#ifndef KCSAND_THREAD_H
#define KCSAND_THREAD_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#define THREAD_DUTY_WINDOW_NS	100000000ull
#define THREAD_DUTY_SHARE_PCT	25

/* The current window of a capped thread: its start, in wall time and in the thread's CPU time. */
struct thread_duty {
	uint64_t t0_ns, cpu0_ns;
	uint64_t rests, rest_ns;	/* rests taken and their length, for stats */
};

/*
 * Pin the calling thread to cpu, then make it SCHED_FIFO at priority.
 * Both are tried; *pin_err and *fifo_err get 0 or a negative errno each.
 */
void thread__pin_fifo(int cpu, int priority, int *pin_err, int *fifo_err);

/* SCHED_FIFO at priority, on any CPU; 0 or a negative errno. */
int thread__fifo(int priority);

/* A window starting now, for the calling thread. */
void thread__duty_init(struct thread_duty *d);

/*
 * The duty cap's rule, a pure function: at wall time now, with the thread's
 * CPU time cpu, how long it must sleep (0: go on); a new window starts at
 * the end of that sleep, or now when the window is over with no rest due.
 */
uint64_t thread__duty_rest_ns(struct thread_duty *d, uint64_t now, uint64_t cpu);

/*
 * After a step of work: reads the clocks and applies the rule.  Returns the
 * CLOCK_MONOTONIC time (ns) to rest until, 0 for none; the caller sleeps so
 * that a stop still wakes it.
 */
uint64_t thread__duty_until(struct thread_duty *d);

/*
 * Is the calling thread allowed on cpu alone, and so on it?  A perf call on
 * one of cpu's events is then a local call, where from any other CPU it is
 * an IPI to cpu and a wait, in the kernel, that nothing bounds: teardown
 * closes a CPU's events from its own pinned thread (docs/kernel-mode.md,
 * "A teardown that waits for ever on an idle CPU").
 */
bool thread__on_cpu(int cpu);

/*
 * Opening a perf event of another CPU (and enabling it) is such a call too,
 * made by whatever thread starts that CPU's sampling.  So that thread visits
 * the CPU first: thread__visit_cpu() moves it there alone (the move wakes it
 * on that CPU, a wake-up that waits for nothing), and its calls on the CPU's
 * events are then local.  thread__save_cpus() before the visits, and
 * thread__restore_cpus() after, give it its CPUs back.  0 or a negative errno
 * each (a failed visit leaves the thread where it was).
 */
int thread__save_cpus(cpu_set_t *saved);
int thread__visit_cpu(int cpu);
int thread__restore_cpus(const cpu_set_t *saved);

/*
 * pthread_join(), bounded: 0, or -ETIMEDOUT when t has not ended within
 * ms (it still runs, and may still use what it was given).
 */
int thread__join_within(pthread_t t, unsigned int ms);

/*
 * fn(arg) from a new thread pinned to cpu, waited for ms at most: 0, or a
 * negative errno: -ETIMEDOUT when it has not ended by then (it may still
 * run later, so arg must stay valid: give it what it alone then owns).
 * For a perf event of cpu that another thread must close.
 */
int thread__run_on(int cpu, void (*fn)(void *), void *arg, unsigned int ms);

#endif

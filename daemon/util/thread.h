/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A per-CPU helper thread's setup: pinned to its CPU, so that what it does
 * to that CPU's perf events are local calls, and SCHED_FIFO, so that a busy
 * workload cannot starve it.  Kernel breakpoint mode's armers (hw/pair.c)
 * and movers (sampler/kbp.c) both need it, and each says in its own words
 * what a failure costs it.
 */
#ifndef KCSAND_THREAD_H
#define KCSAND_THREAD_H

/*
 * Pin the calling thread to cpu, then make it SCHED_FIFO at priority.
 * Both are tried; *pin_err and *fifo_err get 0 or a negative errno each.
 */
void thread__pin_fifo(int cpu, int priority, int *pin_err, int *fifo_err);

#endif

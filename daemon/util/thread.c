// SPDX-License-Identifier: GPL-2.0-only
/* A per-CPU helper thread pinned and real-time, and its duty cap (thread.h). */
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include "clock.h"
#include "thread.h"

void thread__pin_fifo(int cpu, int priority, int *pin_err, int *fifo_err)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* pthread functions return a positive errno, not -1 and errno. */
	*pin_err = -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	*fifo_err = thread__fifo(priority);
}

int thread__fifo(int priority)
{
	struct sched_param sp = { .sched_priority = priority };

	return -pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void thread__duty_init(struct thread_duty *d)
{
	*d = (struct thread_duty){ .t0_ns = clock__now_ns(), .cpu0_ns = thread_cpu_ns() };
}

uint64_t thread__duty_rest_ns(struct thread_duty *d, uint64_t now, uint64_t cpu)
{
	uint64_t used = cpu - d->cpu0_ns, elapsed = now - d->t0_ns, due, rest = 0;

	if (elapsed < THREAD_DUTY_WINDOW_NS &&
	    used * 100 < THREAD_DUTY_WINDOW_NS * THREAD_DUTY_SHARE_PCT)
		return 0;
	/* The wall time in which `used` is the share: the window's end, rest included. */
	due = used * 100 / THREAD_DUTY_SHARE_PCT;
	if (due > elapsed)
		rest = due - elapsed;
	d->t0_ns = now + rest;
	d->cpu0_ns = cpu;
	d->rests += rest > 0;
	d->rest_ns += rest;
	return rest;
}

uint64_t thread__duty_until(struct thread_duty *d)
{
	return thread__duty_rest_ns(d, clock__now_ns(), thread_cpu_ns()) ? d->t0_ns : 0;
}

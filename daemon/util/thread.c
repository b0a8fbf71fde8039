// SPDX-License-Identifier: GPL-2.0-only
/* A per-CPU helper thread pinned and real-time, and its duty cap (thread.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
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

void thread__duty_init(struct thread_duty *d)
{
	*d = (struct thread_duty){ .t0_ns = clock__now_ns(), .cpu0_ns = clock__thread_cpu_ns() };
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
	return thread__duty_rest_ns(d, clock__now_ns(), clock__thread_cpu_ns()) ? d->t0_ns : 0;
}

bool thread__on_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE ||
	    pthread_getaffinity_np(pthread_self(), sizeof(set), &set))
		return false;
	return CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
}

int thread__join_within(pthread_t t, unsigned int ms)
{
	struct timespec ts;

	/* pthread_timedjoin_np() takes a CLOCK_REALTIME deadline. */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return -pthread_timedjoin_np(t, NULL, &ts);
}

struct run_on {
	void (*fn)(void *);
	void *arg;
};

static void *run_on_thread(void *a)
{
	struct run_on r = *(struct run_on *)a;

	free(a);
	r.fn(r.arg);
	return NULL;
}

int thread__run_on(int cpu, void (*fn)(void *), void *arg, unsigned int ms)
{
	struct run_on *r = malloc(sizeof(*r));
	pthread_attr_t attr;
	cpu_set_t set;
	pthread_t t;
	int err;

	if (!r)
		return -ENOMEM;
	*r = (struct run_on){ .fn = fn, .arg = arg };
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	/* Pinned from its first instruction: it never runs fn anywhere else. */
	err = -pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (!err)
		err = -pthread_create(&t, &attr, run_on_thread, r);
	pthread_attr_destroy(&attr);
	if (err) {
		free(r);
		return err;
	}
	err = thread__join_within(t, ms);
	if (err)
		pthread_detach(t);	/* it frees its own when it ends */
	return err;
}

int thread__save_cpus(cpu_set_t *saved)
{
	return -pthread_getaffinity_np(pthread_self(), sizeof(*saved), saved);
}

int thread__visit_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* It returns on cpu: a running thread is migrated before the call returns. */
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int thread__restore_cpus(const cpu_set_t *saved)
{
	return -pthread_setaffinity_np(pthread_self(), sizeof(*saved), saved);
}

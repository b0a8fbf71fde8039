// SPDX-License-Identifier: GPL-2.0-only
/* A per-CPU helper thread pinned and real-time (thread.h). */
#include <pthread.h>
#include <sched.h>
#include "thread.h"

void thread__pin_fifo(int cpu, int priority, int *pin_err, int *fifo_err)
{
	struct sched_param sp = { .sched_priority = priority };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* pthread functions return a positive errno, not -1 and errno. */
	*pin_err = -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	*fifo_err = -pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a detached task completes when another thread fulfils its
 * event, after producing the data the task stands for (OpenMP 5's
 * `detach`, the handoff of asynchronous work: the task's body only
 * starts it).  The master creates the task, hands the event to the other
 * thread, and waits in a taskwait, which returns only once the event is
 * fulfilled: its read comes after the other thread's write.  A detector
 * that ends the task when its body returns sees the read and the write
 * unordered; the write is before omp_fulfill_event(), which is before the
 * task's completion, which is before the taskwait's return.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

static long data;
static atomic_int handed;	/* the event, handed to the fulfiller */

static long requests;

/* The task's body: it only asks for the work (an empty body would be compiled away). */
static SITE void request(void)
{
	requests++;
}

static SITE void produce(long v)
{
	data = v;
}

static SITE long consume(void)
{
	return data;
}

int main(void)
{
	omp_event_handle_t event;	/* shared with the fulfiller */
	long got = 0;

#pragma omp parallel num_threads(2) shared(event)
	{
		if (omp_get_thread_num() == 0) {
#pragma omp task detach(event)
			request();
			atomic_store_explicit(&handed, 1, memory_order_release);
#pragma omp taskwait
			got = consume();
		} else {
			while (!atomic_load_explicit(&handed, memory_order_acquire))
				spin_us(100);
			spin_us(2000);
			produce(42);
			omp_fulfill_event(event);
		}
	}
	return got != 42;
}

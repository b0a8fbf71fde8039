// SPDX-License-Identifier: GPL-2.0-only
/*
 * Racy: the fulfiller of a detached task's event writes the data after
 * omp_fulfill_event(), so the master's read after its taskwait (which
 * waits for the fulfilment, and nothing after it) races with that write.
 * free_omp_task_detach.c with the two calls swapped: a detector that
 * orders the whole fulfiller thread before the taskwait's return would
 * miss it.
 *
 * Expected: data-race in consume / produce
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
			omp_fulfill_event(event);
			spin_us(2000);
			produce(42);
		}
	}
	return got != 0 && got != 42;	/* either, by which came first */
}

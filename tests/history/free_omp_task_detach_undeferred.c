// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: an undeferred detached task (`detach(event) if(0)`) whose
 * event another thread fulfils after its body returned.  Its creator runs
 * the body inside GOMP_task and then waits there until the event is
 * fulfilled (libgomp 12: the event is a semaphore in GOMP_task's frame),
 * so what the fulfiller did before omp_fulfill_event() is before
 * GOMP_task's return.  The body only hands the event over; the fulfiller
 * writes the data, then fulfils; the creator reads it after the task.
 * Reported as `consume / produce` every run until GOMP_task's return
 * acquired the event (docs/history.md, "Detached tasks").
 * racy_omp_task_detach_undeferred_late.c swaps the fulfiller's two steps.
 *
 * Expected: race-free
 */
#include <omp.h>
#include "suite.h"

static long data;
static atomic_int handed;	/* the event, handed to the fulfiller */

static SITE void produce(long v)
{
	data = v;
}

static SITE long consume(void)
{
	return data;
}

#ifndef FULFILLER_STEPS
#define FULFILLER_STEPS() (produce(42), omp_fulfill_event(event))
#define CHECK(got) ((got) != 42)
#endif

int main(void)
{
	omp_event_handle_t event;	/* shared with the fulfiller */
	long got = 0;

#pragma omp parallel num_threads(2) shared(event)
	{
		if (omp_get_thread_num() == 0) {
#pragma omp task detach(event) if(0)
			atomic_store_explicit(&handed, 1, memory_order_release);
			got = consume();
		} else {
			while (!atomic_load_explicit(&handed, memory_order_acquire))
				spin_us(100);
			spin_us(2000);
			FULFILLER_STEPS();
		}
	}
	return CHECK(got);
}

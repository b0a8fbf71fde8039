// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: CPython's GIL flags in small (3.11's gil_drop_request and
 * eval_breaker): relaxed atomics in a static struct, set and read with
 * plain movs, which no lock prefix, xchg or fence ever touches.  Built with
 * -g and shipped stripped, its debug info in a separate file found by
 * build-id (",dbgfile": as Debian's -dbg/-dbgsym packages install it).
 *
 * The requester asks the runner to stop (request_drop(), its stores
 * through a pointer parameter), as take_gil() does when its wait times
 * out; the runner polls `breaker` between steps of work (run_step(), a
 * load indexed by a variable: nothing in the debug info says what it
 * reads), and resets both flags when it sees the request (reset_drop()).
 * Their machine code is a plain int's (docs/marking.md), so without debug
 * info this is a race; with it, the stores through the pointer are typed
 * `_Atomic` (the qualifier rule through a pointer) and teach their
 * address, and the poll is an atomic's learned at run time.  The accessors
 * are macros, as CPython's are: the lines that use them name no atomic.
 *
 * Expected: race-free
 */
#include <stdatomic.h>
#include "suite.h"

#ifndef FLAG_T
#define FLAG_T atomic_int
#define FLAG_SET(f, v) atomic_store_explicit(&(f), (v), memory_order_relaxed)
#define FLAG_GET(f) atomic_load_explicit(&(f), memory_order_relaxed)
#endif
#ifndef ROUNDS
#define ROUNDS 100000
#endif
#define REQUESTS 400

struct ceval {
	FLAG_T breaker;
	FLAG_T drop;
	long steps;	/* the runner's own */
};

static struct ceval cevals[4];
static volatile int which = 1;	/* read each time: the poll is an indexed load */
static atomic_int runner_done;

static SITE void request_drop(struct ceval *c)
{
	FLAG_SET(c->drop, 1);
	FLAG_SET(c->breaker, 1);
}

static SITE void reset_drop(struct ceval *c)
{
	if (FLAG_GET(c->drop))
		FLAG_SET(c->drop, 0);
	FLAG_SET(c->breaker, 0);
}

/* A step of the runner's work, then its poll of breaker. */
static SITE int run_step(long i, unsigned int *h)
{
	*h = (*h ^ (unsigned int)i) * 2654435761u;
	*h ^= *h >> 13;
	return FLAG_GET(cevals[which].breaker);
}

static void *runner(void *arg)
{
	unsigned int h = 0;
	long seen = 0;

	for (long i = 0; i < suite_rounds(ROUNDS); i++) {
		if (run_step(i, &h)) {
#ifndef NO_RESET
			reset_drop(&cevals[which]);
#endif
			seen++;
		}
		cevals[which].steps++;
	}
	atomic_store(&runner_done, 1);
	return (void *)(seen + (h & 1));
}

static void *requester(void *arg)
{
	for (int r = 0; r < REQUESTS && !atomic_load(&runner_done); r++) {
		spin_us(500);
		request_drop(&cevals[which]);
	}
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	start_thread(&a, runner, NULL);
	start_thread(&b, requester, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%ld steps\n", cevals[which].steps);
	return 0;
}

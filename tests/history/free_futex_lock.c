// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a lock of the program's own on the futex system call, as
 * runtimes and databases write one (the three-state mutex of Drepper's
 * "Futexes Are Tricky"): lock by compare-and-swap 0 -> 1, else mark it
 * contended (exchange 2) and FUTEX_WAIT; unlock by a locked decrement,
 * and if it was contended, a plain release store of 0 and FUTEX_WAKE.
 * Built -O2 without -g: only the locked instructions on the lock word say
 * it is an atomic.  Two threads increment a plain counter and append to a
 * plain log under it.
 *
 * Expected: race-free
 */
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include "suite.h"

#define ROUNDS 20000L

static atomic_int word;
static long counter, log_words[64];

static void futex(atomic_int *w, int op, int v)
{
	syscall(SYS_futex, w, op, v, NULL, NULL, 0);
}

static void lock(atomic_int *w)
{
	int c = 0;

	if (atomic_compare_exchange_strong(w, &c, 1))
		return;
	if (c != 2)
		c = atomic_exchange(w, 2);
	while (c != 0) {
		futex(w, FUTEX_WAIT_PRIVATE, 2);
		c = atomic_exchange(w, 2);
	}
}

static void unlock(atomic_int *w)
{
	if (atomic_fetch_sub(w, 1) != 1) {
		atomic_store_explicit(w, 0, memory_order_release);
		futex(w, FUTEX_WAKE_PRIVATE, 1);
	}
}

static SITE void update(long v)
{
	counter++;
	log_words[counter % 64] = v;
}

static void *run(void *arg)
{
	for (long i = 0; i < ROUNDS; i++) {
		lock(&word);
		update(i);
		unlock(&word);
		if (i % 64 == 0)
			sched_yield();
	}
	return NULL;
}

int main(void)
{
	run_pair(run, NULL, run, NULL);
	if (counter != 2 * ROUNDS) {
		fprintf(stderr, "the lock let an update through\n");
		return 1;
	}
	return 0;
}

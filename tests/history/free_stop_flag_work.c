// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: the handoff of racy_stop_flag_work.c done right, -O2 without
 * -g.  The worker calls work() until main publishes a result with a
 * release store of a flag, then reads the result after its loop.  work()
 * touches only the worker's own data.  The flag's load, polled around a
 * call, is taken for an atomic acquire (the spin-wait rule) and must still
 * order the read after the loop, which a call makes too.
 *
 * Expected: race-free
 */
#include <stdatomic.h>
#include "suite.h"

#define ROUNDS 200

static atomic_int ready;
static long result[4];
static long own[64];

static SITE void publish(long v)
{
	for (int i = 0; i < 4; i++)
		result[i] = v + i;
}

static SITE long consume(void)
{
	return result[0] + result[1] + result[2] + result[3];
}

static SITE long work(long i)
{
	own[i & 63] += i;
	return own[(i + 1) & 63];
}

static void *worker(void *arg)
{
	long sum = 0, i = 0;

	while (!atomic_load_explicit(&ready, memory_order_acquire))
		sum += work(i++);
	return (void *)(sum + consume());
}

int main(void)
{
	for (int r = 0; r < ROUNDS; r++) {
		pthread_t t;
		void *ret;

		atomic_store_explicit(&ready, 0, memory_order_relaxed);
		start_thread(&t, worker, NULL);
		spin_us(200);
		publish(r);
		atomic_store_explicit(&ready, 1, memory_order_release);
		pthread_join(t, &ret);
	}
	return 0;
}

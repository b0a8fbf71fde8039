// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a counter under a mutex, in a statically linked executable.
 * Its pthread_mutex_lock and unlock are its own copies, found through its
 * symbol table (.symtab): it has no dynamic symbols.  100,000 rounds a
 * thread, to run past the sampler's cold start.
 *
 * Expected: race-free
 */
#include "suite.h"

#define ROUNDS 100000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
SUITE_COUNTER(counter, bump)

static void *worker(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock);
		bump();
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	run_pair(worker, NULL, worker, NULL);
	return counter != 2L * ROUNDS;
}

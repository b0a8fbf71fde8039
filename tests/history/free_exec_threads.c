// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a program that replaces itself with exec, as a server that
 * re-executes itself on upgrade does.  Before the exec, a worker thread
 * keeps adding to a plain total in the heap and in .bss; the main thread
 * execs while it runs (exec ends every other thread).  The new image runs
 * two threads that add to its own totals under a mutex.  Nothing of the
 * old image's memory is the new one's: its accesses race with nothing.
 *
 * Expected: race-free
 */
#include <string.h>
#include <unistd.h>
#include "suite.h"

#define ROUNDS	20000

static long total;
static long *heap_total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static SITE void add(long v)
{
	total += v;
	*heap_total += v;
}

static void *old_worker(void *arg)
{
	for (;;)
		add(1);
	return NULL;
}

static void *new_worker(void *arg)
{
	for (long r = 0; r < ROUNDS; r++) {
		pthread_mutex_lock(&lock);
		add(1);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	char *again[] = { argv[0], "again", NULL };
	pthread_t t;

	heap_total = calloc(64, sizeof(long));
	if (!heap_total)
		return 2;
	if (argc < 2 || strcmp(argv[1], "again")) {
		start_thread(&t, old_worker, NULL);
		spin_us(20000);
		execv("/proc/self/exe", again);
		return 2;
	}
	run_pair(new_worker, NULL, new_worker, NULL);
	return total != 2 * ROUNDS || *heap_total != 2 * ROUNDS;
}

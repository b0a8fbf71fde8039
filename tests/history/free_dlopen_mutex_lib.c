// SPDX-License-Identifier: GPL-2.0-only
/*
 * The plugin of free_dlopen_mutex.c: a table guarded by a mutex of its
 * own, built as a shared object and loaded with dlopen().
 */
#include <pthread.h>

#define SLOTS	64

static long table[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline, noipa)) static void store(long key, long value)
{
	table[key % SLOTS] += value;
}

void plugin_put(long key, long value)
{
	pthread_mutex_lock(&lock);
	store(key, value);
	pthread_mutex_unlock(&lock);
}

long plugin_sum(void)
{
	long s = 0;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < SLOTS; i++)
		s += table[i];
	pthread_mutex_unlock(&lock);
	return s;
}

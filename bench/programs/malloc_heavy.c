// SPDX-License-Identifier: GPL-2.0-only
/*
 * A malloc-heavy program for bench/user/history-malloc.sh: two threads, each
 * allocating blocks of 16 to 4,096 bytes (and one of 64 KiB in 64), writing
 * them and freeing them in a ring of 256, with a little work per block.
 *
 *   malloc_heavy ROUNDS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING	256

static long rounds;

static __attribute__((noinline)) void touch(char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i += 64)
		p[i] = (char)(seed + i);
}

static void *worker(void *arg)
{
	char *ring[RING] = { 0 };
	unsigned int seed = (unsigned int)(long)arg;
	long sum = 0;

	for (long r = 0; r < rounds; r++) {
		unsigned int k = r % RING;
		size_t n = r % 64 == 0 ? 65536 : 16 + (rand_r(&seed) % 4081);

		free(ring[k]);
		ring[k] = malloc(n);
		if (!ring[k])
			exit(2);
		touch(ring[k], n, seed);
		for (int w = 0; w < 200; w++)
			sum += w ^ (long)ring[k][0];
	}
	for (int k = 0; k < RING; k++)
		free(ring[k]);
	return (void *)sum;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	rounds = argc > 1 ? atol(argv[1]) : 200000;
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)))
			return 2;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/* Two threads bump a counter that lives in libracy.so (tests/shlib/racy_lib.c). */
#include <pthread.h>
#include <stdlib.h>

void lib_bump(void);

static pthread_barrier_t start;

static void *bumper(void *arg)
{
	long n = (long)arg;

	pthread_barrier_wait(&start);
	for (long i = 0; i < n; i++) {
		lib_bump();
		asm volatile("" ::: "memory");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 60000;
	pthread_t t[2];

	pthread_barrier_init(&start, NULL, 2);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, bumper, (void *)n);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}

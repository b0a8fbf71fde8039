// SPDX-License-Identifier: GPL-2.0-only
/*
 * A race-free target for the daemon's history test: two threads add to a
 * plain counter under a mutex, and a third hands a plain value to them
 * under the same mutex, until the file argv[1] exists; then each does
 * 10,000 more rounds and the process exits 0 if the counter adds up.  It
 * runs before kcsand attaches to it, so its threads' earlier sync (and a
 * lock held at that moment) went unseen.
 */
#include "../history/suite.h"

#define AFTER	10000

SUITE_LOCKED_COUNTER()

static long rounds[2];
static const char *stop_file;

static void *worker(void *arg)
{
	long *n = arg, left = -1, seen = 0;

	while (left != 0) {
		pthread_mutex_lock(&lock);
		bump();
		seen += take();
		pthread_mutex_unlock(&lock);
		(*n)++;
		if (left > 0)
			left--;
		else if (left < 0 && (*n & 1023) == 0 && !access(stop_file, F_OK))
			left = AFTER;
	}
	return (void *)seen;
}

static void *passer(void *arg)
{
	for (long v = 0; access(stop_file, F_OK); v++) {
		pthread_mutex_lock(&lock);
		pass(v);
		pthread_mutex_unlock(&lock);
		usleep(1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[3];

	if (argc != 2)
		return 2;
	stop_file = argv[1];
	if (pthread_create(&t[0], NULL, worker, &rounds[0]) ||
	    pthread_create(&t[1], NULL, worker, &rounds[1]) ||
	    pthread_create(&t[2], NULL, passer, NULL))
		return 2;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", counter);
	return counter != rounds[0] + rounds[1];
}

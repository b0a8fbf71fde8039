// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: a thread pool with a work queue on a condition variable,
 * written with C11's <threads.h> (thrd_create, mtx_lock, cnd_wait), built
 * -O2 without -g as a distribution builds it.  The submitter allocates
 * each job on the heap and queues it; a worker takes it under the lock,
 * writes the job's result into a plain array, frees the job, and counts it
 * done under the lock; the submitter waits for the count on a second
 * condition variable, reads every result, and reuses the array for the
 * next batch.
 *
 * Expected: race-free
 */
#include <stdlib.h>
#include <threads.h>
#include "suite.h"

#define WORKERS 3
#define BATCHES 1000
#define JOBS 16

struct job {
	struct job *next;
	int index;
	long arg;
};

static mtx_t lock;
static cnd_t work, done_cv;
static struct job *queue;
static int done, stopping;
static long results[JOBS];

static SITE void run_job(const struct job *j)
{
	results[j->index] = j->arg * 2 + 1;
}

static SITE long read_results(void)
{
	long s = 0;

	for (int i = 0; i < JOBS; i++)
		s += results[i];
	return s;
}

static int worker(void *arg)
{
	for (;;) {
		struct job *j;

		mtx_lock(&lock);
		while (!queue && !stopping)
			cnd_wait(&work, &lock);
		j = queue;
		if (j)
			queue = j->next;
		mtx_unlock(&lock);
		if (!j)
			return 0;
		run_job(j);
		free(j);
		mtx_lock(&lock);
		if (++done == JOBS)
			cnd_signal(&done_cv);
		mtx_unlock(&lock);
	}
}

int main(void)
{
	thrd_t t[WORKERS];
	long got = 0, want = 0;

	mtx_init(&lock, mtx_plain);
	cnd_init(&work);
	cnd_init(&done_cv);
	for (int i = 0; i < WORKERS; i++)
		if (thrd_create(&t[i], worker, NULL) != thrd_success)
			return 2;
	for (long b = 0; b < BATCHES; b++) {
		for (int i = 0; i < JOBS; i++) {
			struct job *j = malloc(sizeof(*j));

			if (!j)
				return 2;
			j->index = i;
			j->arg = b + i;
			mtx_lock(&lock);
			j->next = queue;
			queue = j;
			mtx_unlock(&lock);
			cnd_signal(&work);
			want += (b + i) * 2 + 1;
		}
		mtx_lock(&lock);
		while (done < JOBS)
			cnd_wait(&done_cv, &lock);
		done = 0;
		mtx_unlock(&lock);
		got += read_results();
		for (int i = 0; i < JOBS; i++)
			results[i] = 0;
	}
	mtx_lock(&lock);
	stopping = 1;
	mtx_unlock(&lock);
	cnd_broadcast(&work);
	for (int i = 0; i < WORKERS; i++)
		thrd_join(t[i], NULL);
	if (got != want) {
		fprintf(stderr, "a job was lost\n");
		return 1;
	}
	return 0;
}

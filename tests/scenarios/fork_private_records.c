// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two processes, one address, no sharing.  The program forks; parent and
 * child each copy 16-byte records into and out of their own copy of the
 * global `rec`, so the same code touches the same virtual address in two
 * address spaces.  A watchpoint one process sets must not be consumed by
 * the other: 16-byte accesses are reported whatever their values do, and
 * report_value_change_only=0 reports a pair whose value did not change, so
 * a watchpoint matched on the address alone is reported as "get / put" or
 * "put / put" (issue 10, finding 5).
 *
 *   (none)    one thread per process runs put then get: nothing races;
 *   threads   put and get in two threads of each process: a race inside
 *             a process, still reported (the positive control).
 *
 * gcc 12 -O1:  put: movdqa (%rdi),%xmm0 ; movaps %xmm0,rec(%rip)
 *              get: movdqa rec(%rip),%xmm0 ; movaps %xmm0,(%rdi)
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "scenario.h"

/* kcsand-test: name=fork_private_records args="--param report_value_change_only=0" iters=8000 expect=none */
/* kcsand-test: name=fork_private_records_threads args="--halt-on-error --param report_value_change_only=0" prog_args="threads" iters=200000 expect=report title="data-race in get / put" access="^read to 0x[0-9a-f]+ of 16 bytes by task [0-9]+ on cpu [0-9]+:$" access="^write to 0x[0-9a-f]+ of 16 bytes by task [0-9]+ on cpu [0-9]+:$" */

#define ITERS 8000

struct record {
	long seq, val;
} __attribute__((aligned(16)));

struct record rec;

RACY void put(const struct record *r)
{
	rec = *r;
}

RACY void get(struct record *r)
{
	*r = rec;
}

static void *putter(void *arg)
{
	struct record r = { 0, (long)getpid() };
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i++) {
		r.seq = i;
		put(&r);
		barrier();
	}
	return NULL;
}

static void *getter(void *arg)
{
	struct record r;
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i++) {
		get(&r);
		barrier();
	}
	return NULL;
}

/* One thread: each copy in, then out, of this process's own rec. */
static void *alone(void *arg)
{
	struct record r = { 0, (long)getpid() }, back;
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i++) {
		r.seq = i;
		put(&r);
		get(&back);
		barrier();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*const two[])(void *) = { putter, getter };
	void *(*const one[])(void *) = { alone };
	int threads = argc > 1 && !strcmp(argv[1], "threads");
	long n = scenario_iters(ITERS);
	int status = 0;
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (threads)
		run_threads(2, two, (void *)n);
	else
		run_threads(1, one, (void *)n);
	if (pid == 0)
		return 0;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		fprintf(stderr, "fork_private_records: child did not exit normally\n");
		return 1;
	}
	return WEXITSTATUS(status);
}

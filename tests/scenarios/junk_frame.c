// SPDX-License-Identifier: GPL-2.0-only
/*
 * A frame-pointer walk through a function without frame pointers.
 *
 * store() has a frame (-fno-omit-frame-pointer); its caller hop(), like
 * libgomp's functions, has none and uses rbp for its own data: here a
 * pointer to two words on its stack that look like a saved frame.  The walk
 * from store() reaches hop() through store()'s frame, then reads hop()'s
 * data as the next frame: a "return address" 0x300000002, which no call
 * precedes.  The report must stop its stacks before it.
 */
#include "scenario.h"

/* Racy: about 10 s under kcsand. */
#define ITERS 100000

long x;

RACY void store(long v)
{
	x += v;
}

/* hop(v): calls store(v) with rbp pointing to {stack address, 0x300000002}. */
asm(".text\n"
    ".globl hop\n"
    ".type hop, @function\n"
    "hop:\n"
    "	push %rbp\n"
    "	sub $16, %rsp\n"
    "	lea 8(%rsp), %rax\n"
    "	mov %rax, (%rsp)\n"
    "	movabs $0x300000002, %rax\n"
    "	mov %rax, 8(%rsp)\n"
    "	mov %rsp, %rbp\n"
    "	call store\n"
    "	add $16, %rsp\n"
    "	pop %rbp\n"
    "	ret\n"
    ".size hop, .-hop\n");

void hop(long v);

static void *thread_fn(void *arg)
{
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i++) {
		hop(i);
		barrier();
	}
	return NULL;
}

int main(void)
{
	void *(*const fn[])(void *) = { thread_fn, thread_fn };

	run_threads(2, fn, (void *)scenario_iters(ITERS));
	return 0;
}

/* kcsand-test: name=junk_frame args="--halt-on-error" iters=2000000 expect=report title="data-race in store / store" access="^ store\+0x[0-9a-f]+/0x[0-9a-f]+" access="^ hop\+0x[0-9a-f]+/0x[0-9a-f]+$" frames_re="^ ([A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+/0x[0-9a-f]+( .*)?|0x[0-9a-f]+ \([^ ]+\+0x[0-9a-f]+\))$" */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * A stack deeper than kcsand copies.  Built -O2 -fomit-frame-pointer, so
 * stacks are unwound by the CFI over a copy of the stack that BPF takes
 * (KCSAND_USTACK_SIZE, 8 KiB from the stack pointer up).  Each worker
 * thread calls descend() 40 deep, each frame some 280 bytes (a volatile
 * 256-byte array): about 11 KiB between the racing access in add(), at
 * the bottom, and start_thread.  The unwind reads past the copy's end
 * before it reaches the thread's first frame: the report keeps the
 * frames it reached, and stacks_cut counts the cut.
 */
#include "scenario.h"

/* Racy: about 10 s under kcsand (one probed access per iteration). */
#define ITERS 200000
#define DEPTH 40

long total;

RACY void add(long v)
{
	total += v;
}

/* Work after the call, so that gcc cannot turn the recursion into a loop. */
RACY long descend(int depth, long v)
{
	volatile char pad[256];

	pad[0] = (char)v;
	pad[255] = (char)depth;
	if (!depth) {
		add(v);
		return v;
	}
	return descend(depth - 1, v + pad[0]) + pad[255];
}

SCENARIO_LOOP(deep_thread, descend(DEPTH, i))

SCENARIO_MAIN(ITERS, deep_thread, deep_thread)

/* kcsand-test: name=nofp_deep_stack args="--halt-on-error" iters=2000000 expect=report title="data-race in add / add" access="^ add\+0x[0-9a-f]+/0x[0-9a-f]+ .*nofp_deep_stack.c:[0-9]+$" access="^ descend\+0x[0-9a-f]+/0x[0-9a-f]+ " log_re="stacks_cut: [1-9]" */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two threads store different values to one aligned 8-byte word, and
 * nobody reads it.  With assume_plain_writes_atomic=1 (the default) such
 * stores are treated as atomic: they never set watchpoints, so there is
 * nothing to report.  With assume_plain_writes_atomic=0 they watch, and
 * the other writer's store changes the watched value.
 *
 * gcc 12 -O1:  writer_a, writer_b: mov %rdi,w(%rip)   (plain 8-byte stores)
 */
#include "scenario.h"

/* Racy: about 10 s under kcsand (one probed access per iteration). */
#define ITERS 150000

long w __attribute__((aligned(8)));

RACY void writer_a(long v)
{
	w = v;
}

RACY void writer_b(long v)
{
	w = v;
}

/* writer_a stores even values, writer_b odd ones: every store changes w. */
SCENARIO_LOOP(thread_a, writer_a(2 * i))

SCENARIO_LOOP(thread_b, writer_b(2 * i + 1))

SCENARIO_MAIN(ITERS, thread_a, thread_b)

/* kcsand-test: name=write_write_word expect=none */
/* kcsand-test: name=write_write_word_not_atomic args="--halt-on-error --param assume_plain_writes_atomic=0" iters=2000000 expect=report title="data-race in writer_a / writer_b" access="^write to 0x[0-9a-f]+ of 8 bytes by task [0-9]+ on cpu [0-9]+:$" access="^write to 0x[0-9a-f]+ of 8 bytes by task [0-9]+ on cpu [0-9]+:$" value_changed=yes */

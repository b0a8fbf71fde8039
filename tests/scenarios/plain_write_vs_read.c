// SPDX-License-Identifier: GPL-2.0-only
/*
 * A plain read racing with a plain write of increasing values.
 *
 * reader() watches x; writer()'s aligned 4-byte store is assumed atomic
 * (it sets no watchpoint) but still hits the reader's watchpoint, and the
 * value the reader sees changes: KCSAN's basic read/write race.
 *
 * gcc 12 -O1:  reader: mov x(%rip),%eax     (plain 4-byte load)
 *              writer: mov %edi,x(%rip)     (plain 4-byte store)
 */
#include "scenario.h"

/* Racy: about 10 s under kcsand (one probed access per iteration). */
#define ITERS 100000

int x;

RACY int reader(void)
{
	return x;
}

RACY void writer(int v)
{
	x = v;
}

SCENARIO_LOOP(reader_thread, reader())

SCENARIO_LOOP(writer_thread, writer(i + 1))

SCENARIO_MAIN(ITERS, reader_thread, writer_thread)

/* kcsand-test: name=plain_write_vs_read args="--no-history --halt-on-error" iters=2000000 expect=report title="data-race in reader / writer" access="^read to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" access="^write to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" value_changed=yes */
/* kcsand-test: name=plain_write_vs_read_marks args="--marks tests/scenarios/marks/plain_write_vs_read.marks" expect=none */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * A writer keeps storing the value that is already there while a reader
 * reads it.  The reader's watchpoint is hit, but the value it watches
 * never changes: with report_value_change_only=1 (the default) KCSAN
 * stays silent; with report_value_change_only=0 it reports the race,
 * without a "value changed:" line.
 *
 * gcc 12 -O1:  reader: mov x(%rip),%eax      (plain 4-byte load)
 *              writer: movl $0x2a,x(%rip)    (plain 4-byte store, immediate)
 */
#include "scenario.h"

/* Racy: about 10 s under kcsand (one probed access per iteration). */
#define ITERS 150000

int x = 42;

RACY int reader(void)
{
	return x;
}

RACY void writer(void)
{
	x = 42;
}

SCENARIO_LOOP(reader_thread, reader())

SCENARIO_LOOP(writer_thread, writer())

SCENARIO_MAIN(ITERS, reader_thread, writer_thread)

/* kcsand-test: name=same_value_write expect=none */
/* kcsand-test: name=same_value_write_report_all args="--halt-on-error --param report_value_change_only=0" iters=2000000 expect=report title="data-race in reader / writer" access="^read to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" access="^write to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" value_changed=no */

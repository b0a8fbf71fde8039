// SPDX-License-Identifier: GPL-2.0-only
/*
 * data_race(): an intentionally racy read, as in the kernel, where the
 * macro also tells KCSAN never to report it.  User space has no such
 * macro; the one below changes nothing in the code, and the source rule
 * finds "data_race(" at the read's line.  The read is never watched and
 * never reported, even against a plain write (which without marking is
 * plain_write_vs_read).
 *
 * gcc 12 -O1:  lazy_reader: mov x(%rip),%eax      (plain 4-byte load, data_race)
 *              writer:      mov %edi,x(%rip)      (plain 4-byte store)
 */
#include "scenario.h"

#define data_race(expr) (expr)

/* Race-free by intent: about 6 s under kcsand (one probed access per call). */
#define ITERS 100000

int x;

RACY int lazy_reader(void)
{
	return data_race(x);
}

RACY void writer(int v)
{
	x = v;
}

SCENARIO_LOOP(reader_thread, lazy_reader())

SCENARIO_LOOP(writer_thread, writer(i + 1))

SCENARIO_MAIN(ITERS, reader_thread, writer_thread)

/* kcsand-test: name=data_race expect=none */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * A line with a marked and a plain access: "return READ_ONCE(a) + c;".
 * The source rule decides by column: gcc places the load of a at
 * READ_ONCE (a volatile access keeps its location) and the add from c at
 * the '+', outside the call.  a is only ever accessed through
 * READ_ONCE/WRITE_ONCE, so its accesses never race; c is written
 * plainly and its read is plain, so that race is reported, and only it.
 *
 * gcc 12 -O1:  sum:     mov a(%rip),%eax          (READ_ONCE: marked 4-byte load)
 *                       add c(%rip),%eax          (plain 4-byte load)
 *              write_a: mov %edi,a(%rip)          (WRITE_ONCE: marked 4-byte store)
 *              write_c: mov %edi,c(%rip)          (plain 4-byte store)
 */
#include "scenario.h"

#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val)	(*(volatile __typeof__(x) *)&(x) = (val))

/*
 * Racy: the runner stops it at the first report, with every site armed; a false
 * report on a would still come first often enough to fail the case.
 */
#define ITERS 50000

int a, c;

RACY int sum(void)
{
	return READ_ONCE(a) + c;
}

RACY void write_a(int v)
{
	WRITE_ONCE(a, v);
}

RACY void write_c(int v)
{
	c = v;
}

SCENARIO_LOOP(sum_thread, sum())

static void *write_thread(void *arg)
{
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i++) {
		write_a(i + 1);
		write_c(i + 1);
		barrier();
	}
	return NULL;
}

SCENARIO_MAIN(ITERS, sum_thread, write_thread)

/* kcsand-test: name=mixed_line args="--no-history --halt-on-error" iters=2000000 expect=report title="data-race in sum / write_c" access="^read to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" access="^write to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" value_changed=yes */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * A plain read racing with a relaxed atomic store.  The store is marked by
 * the source rule (__atomic_store_n at its line): it sets no watchpoint,
 * but it hits the reader's, and a plain access racing with a marked one is
 * still a data race.  The store is reported as "write (marked)".
 *
 * gcc 12 -O1:  reader:        mov x(%rip),%eax      (plain 4-byte load)
 *              relaxed_store: mov %edi,x(%rip)      (marked 4-byte store, a plain mov)
 */
#include "scenario.h"

/* Racy: about 10 s under kcsand at most (one probed access per iteration). */
#define ITERS 300000

int x;

RACY int reader(void)
{
	return x;
}

RACY void relaxed_store(int v)
{
	__atomic_store_n(&x, v, __ATOMIC_RELAXED);
}

SCENARIO_LOOP(reader_thread, reader())

SCENARIO_LOOP(store_thread, relaxed_store(i + 1))

SCENARIO_MAIN(ITERS, reader_thread, store_thread)

/*
 * Every site armed (budget 100): the history takes a marked access for
 * synchronization, not for an access, so only a watchpoint finds this race,
 * and only while both threads run probed.  At the default budget the sites
 * back off once the start credit is spent and the rest of the loop runs in
 * milliseconds: a fresh-clone CI run missed it once (98 watchpoints, the
 * threads never overlapped in the probed window; 1 miss in 91 runs here).
 */
/*
 * The history finds this pair too, and first (tests/history: racy_plain_vs_atomic,
 * racy_fork_child); this case checks the watchpoint protocol's report, its
 * value change included, so it runs without the history.
 */
/* kcsand-test: name=plain_read_vs_relaxed_store args="--no-history --halt-on-error --param overhead_budget=100" iters=2000000 expect=report title="data-race in reader / relaxed_store" access="^read to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" access="^write \(marked\) to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" value_changed=yes */

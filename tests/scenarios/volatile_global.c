// SPDX-License-Identifier: GPL-2.0-only
/*
 * A volatile-qualified global read and written by two threads, the
 * user-space idiom of READ_ONCE/WRITE_ONCE.  The qualifier rule finds the
 * volatile in the DWARF type of the RIP-relative target: both sides are
 * marked, and two marked accesses never race.  Nothing may be reported.
 *
 * gcc 12 -O1:  poll_flag: mov flag(%rip),%eax     (plain-looking 4-byte load)
 *              set_flag:  mov %edi,flag(%rip)     (plain-looking 4-byte store)
 */
#include "scenario.h"

/* Race-free: about 6 s under kcsand (one probed access per call). */
#define ITERS 100000

volatile int flag;

RACY int poll_flag(void)
{
	return flag;
}

RACY void set_flag(int v)
{
	flag = v;
}

SCENARIO_LOOP(poll_thread, poll_flag())

SCENARIO_LOOP(set_thread, set_flag(i + 1))

SCENARIO_MAIN(ITERS, poll_thread, set_thread)

/* kcsand-test: name=volatile_global expect=none */

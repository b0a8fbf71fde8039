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

static void *poll_thread(void *arg)
{
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i++) {
		poll_flag();
		barrier();
	}
	return NULL;
}

static void *set_thread(void *arg)
{
	long i, n = (long)arg;

	wait_for_start();
	for (i = 0; i < n; i++) {
		set_flag(i + 1);
		barrier();
	}
	return NULL;
}

int main(void)
{
	void *(*const fn[])(void *) = { poll_thread, set_thread };

	run_threads(2, fn, (void *)scenario_iters(ITERS));
	return 0;
}

/* kcsand-test: name=volatile_global expect=none */

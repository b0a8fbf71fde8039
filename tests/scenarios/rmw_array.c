// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two threads increment the elements of a small array without a lock.
 *
 * a[i]++ compiles to one read-modify-write instruction, which KCSAN calls
 * a "read-write" access: it is never assumed atomic, so both sides set
 * watchpoints and both access lines say read-write.
 *
 * gcc 12 -O1:  bump: movslq %edi,%rdi; addl $0x1,a(,%rdi,4)
 *              (plain 4-byte RMW with a SIB address; no lock prefix)
 */
#include "scenario.h"

/* Racy: about 10 s under kcsand (one probed access per iteration). */
#define ITERS 300000
#define NELEM 4

int a[NELEM];

RACY void bump(int i)
{
	a[i]++;
}

SCENARIO_LOOP(up_thread, bump(i % NELEM))

SCENARIO_LOOP(down_thread, bump(NELEM - 1 - i % NELEM))

SCENARIO_MAIN(ITERS, up_thread, down_thread)

/* kcsand-test: name=rmw_array args="--halt-on-error" iters=2000000 expect=report title="data-race in bump / bump" access="^read-write to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" access="^read-write to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" value_changed=yes */

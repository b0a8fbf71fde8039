// SPDX-License-Identifier: GPL-2.0-only
/*
 * A C++ member function racing with itself: the report names it demangled,
 * without its parameter list ("Counter::bump"), as a C function would be.
 *
 * g++ 12 -O1:  Counter::bump: addq $1,(%rdi)   (plain read-modify-write)
 */
#include "scenario.h"

/* kcsand-test: name=cxx_member_race args="--halt-on-error" iters=2000000 expect=report title="data-race in ns::Counter::bump / ns::Counter::bump" access="^read-write to 0x[0-9a-f]+ of 8 bytes by task [0-9]+ on cpu [0-9]+:$" access="^ ns::Counter::bump\+0x[0-9a-f]+/0x[0-9a-f]+ .*cxx_member_race.cc:[0-9]+$" value_changed=yes */

#define ITERS 100000

namespace ns {
struct Counter {
	long n = 0;
	RACY void bump(int by);
};

void Counter::bump(int by)
{
	n += by;
}
} // namespace ns

static ns::Counter counter;

static void *bumper(void *arg)
{
	long n = (long)arg;

	wait_for_start();
	for (long i = 0; i < n; i++) {
		counter.bump(1);
		barrier();
	}
	return NULL;
}

SCENARIO_MAIN(ITERS, bumper, bumper)

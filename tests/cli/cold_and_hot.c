// SPDX-License-Identifier: GPL-2.0-only
/*
 * Many cold sites and one hot one, for the check that a re-arm makes again
 * only the links of the sites that changed (run-cli-tests.sh
 * rearm_only_changed): 1,600 stores in 16 functions that never run (their
 * sites stay armed, never hit), and a loop on hot() until its site is no
 * longer probed, seen by the loop's own
 * speed: a batch of BATCH calls takes milliseconds while each traps and
 * microseconds once the sampler has taken its probe off.  Ten fast
 * batches in a row end it; so does a minute, so that it ends at last.
 */
#include <time.h>

#define BATCH	1000

volatile long g[1600];
static volatile long counter;

#define S1(i)	g[i] = v + (i)
#define S10(i)	S1(i); S1(i + 1); S1(i + 2); S1(i + 3); S1(i + 4); S1(i + 5); S1(i + 6); \
		S1(i + 7); S1(i + 8); S1(i + 9)
#define S100(i)	S10(i); S10(i + 10); S10(i + 20); S10(i + 30); S10(i + 40); S10(i + 50); \
		S10(i + 60); S10(i + 70); S10(i + 80); S10(i + 90)
#define COLD(n)	__attribute__((noinline, noipa)) void cold##n(long v) { S100(n * 100); }

COLD(0) COLD(1) COLD(2) COLD(3) COLD(4) COLD(5) COLD(6) COLD(7)
COLD(8) COLD(9) COLD(10) COLD(11) COLD(12) COLD(13) COLD(14) COLD(15)

__attribute__((noinline, noipa)) void hot(void)
{
	counter++;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double start = now_s(), t0;
	int fast = 0;

	(void)argv;
	if (argc > 99) {
		cold0(1); cold1(1); cold2(1); cold3(1); cold4(1); cold5(1); cold6(1); cold7(1);
		cold8(1); cold9(1); cold10(1); cold11(1); cold12(1); cold13(1); cold14(1);
		cold15(1);
	}
	while (fast < 10 && now_s() - start < 60) {
		t0 = now_s();
		for (int i = 0; i < BATCH; i++)
			hot();
		/* 1 us a call or more while it traps; a few ns once it does not. */
		fast = now_s() - t0 < BATCH * 100e-9 ? fast + 1 : 0;
	}
	return fast < 10;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Race-free: C++ function-local statics, each constructed by the first
 * thread that reaches it, read by the others.  The compiler guards each
 * one with a guard variable: __cxa_guard_acquire() and
 * __cxa_guard_release() around the constructor, and a fast path that
 * loads the guard's first byte (an acquire on x86, a plain mov) and skips
 * the calls once it is set.  The second thread arrives later, so it takes
 * the fast path: it calls nothing, yet it is ordered after the
 * constructor.
 *
 * 64 statics, read many times, so that the run leaves the sampler's cold
 * start; built at -O2, as release code is.
 *
 * Expected: race-free
 */
#include "suite.h"

#define ROUNDS 2000	/* suite_rounds(): a tenth in the run with every site armed */

struct table {
	long v[8];
	SITE explicit table(long seed)
	{
		for (int i = 0; i < 8; i++)
			v[i] = seed + i;
	}
};

template <int N> SITE const table &table_of()
{
	static table t(N);

	return t;
}

static SITE long total(const table &t)
{
	long s = 0;

	for (int i = 0; i < 8; i++)
		s += t.v[i];
	return s;
}

typedef const table &(*getter)();

template <int... N> struct getters {
	static constexpr getter all[] = { table_of<N>... };
};

#define G8(b) b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7
static const getter *const all = getters<G8(0), G8(8), G8(16), G8(24), G8(32), G8(40), G8(48),
					 G8(56)>::all;

static void *reader(void *arg)
{
	long sum = 0, rounds = suite_rounds(ROUNDS);

	/* The second thread comes later: the statics are built by then. */
	if (arg)
		spin_us(20000);
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < 64; i++)
			sum += total(all[i]());
		spin_us(50);
	}
	return (void *)sum;
}

int main()
{
	pthread_t a, b;
	void *sa, *sb;

	if (pthread_create(&a, NULL, reader, NULL) || pthread_create(&b, NULL, reader, (void *)1))
		return 2;
	pthread_join(a, &sa);
	pthread_join(b, &sb);
	return sa != sb;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * A long-running target for tests/daemon-watch.sh: peek() reads level and
 * poke() writes it from two threads, with nothing ordering them, until
 * the process is killed.  The test probes only tick() (which touches the
 * reader thread's own counter), so the race on level is seen only by a
 * hardware watchpoint: `kcsanctl watch add level --pid PID`.
 *
 * spare_a..spare_d are never touched: the test fills the four debug
 * registers with them and checks that a fifth watch is refused.
 *
 * gcc 12 -O1:  peek: mov level(%rip),%eax     (plain 4-byte load, not probed)
 *              poke: mov %edi,level(%rip)     (plain 4-byte store, not probed)
 */
#include <pthread.h>

#define RACY __attribute__((noinline, noipa))
#define barrier() asm volatile("" ::: "memory")

int level __attribute__((aligned(64)));
long ticks __attribute__((aligned(64)));	/* only the reader thread touches it */
long spare_a __attribute__((aligned(64)));
long spare_b __attribute__((aligned(64)));
long spare_c __attribute__((aligned(64)));
long spare_d __attribute__((aligned(64)));

RACY int peek(void)
{
	return level;
}

RACY void poke(int v)
{
	level = v;
}

RACY void tick(void)
{
	ticks++;
}

static void *reader(void *arg)
{
	for (long i = 0;; i++) {
		peek();
		if (!(i & 1023))
			tick();
		barrier();
	}
	return NULL;
}

static void *writer(void *arg)
{
	for (long i = 0;; i++) {
		poke(i);
		barrier();
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	pthread_create(&t[0], NULL, reader, NULL);
	pthread_create(&t[1], NULL, writer, NULL);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	return 0;
}

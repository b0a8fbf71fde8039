// SPDX-License-Identifier: GPL-2.0-only
/*
 * Shaped like stress-ng's atomic stressor, and built as Debian ships it:
 * -O2, no debug info, stripped (tests/debuginfo-check.sh), so that nothing
 * but the instructions tells an atomic access from a plain one.  Processes
 * forked over one MAP_SHARED page work on four words of 8, 4, 2 and 1
 * bytes with gcc's __atomic builtins.  The relaxed and acquire loads and
 * the relaxed stores compile to plain movs; the read-modify-writes to
 * lock-prefixed instructions and cmpxchg loops, which show the words to be
 * atomics (bpf/atomics.bpf.h).
 *
 * The parent's two threads run every operation.  The child's two threads
 * run only those that compile to plain movs, after the parent's first
 * round: the words are atomics by the lock-prefixed accesses of another
 * process, as in stress-ng's report (docs/real-programs.md), where the
 * writers under a plain load's watchpoint were the other processes.
 * Race-free.
 *
 *   atomic_stressor [ROUNDS [racy]]
 *
 * racy: the child's threads first increment a plain counter with no lock,
 * a real race, whose address the program prints ("plain counter at 0x...").
 * First: kcsand takes a plain load of a learned atomic for an acquire and
 * a store for a release, which would order the increments that follow.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct shared {
	uint64_t w64;
	uint32_t w32;
	uint16_t w16;
	uint8_t w8;
};

static struct shared *shared;
static long rounds = 2000;
static int racy;
static unsigned long plain_counter;	/* racy: the child's threads race on it */

/* One round on one word: the plain-mov atomics first, as stress-ng's, then the RMWs. */
#define EXERCISE(name, type)							\
static __attribute__((noinline)) type name(type *w, type seed)			\
{										\
	type v, sum = 0;							\
										\
	__atomic_store_n(w, seed, __ATOMIC_RELAXED);				\
	__atomic_load(w, &v, __ATOMIC_RELAXED);					\
	sum += v;								\
	__atomic_load(w, &v, __ATOMIC_ACQUIRE);					\
	sum += v;								\
	sum += __atomic_add_fetch(w, 1, __ATOMIC_RELAXED);			\
	sum += __atomic_sub_fetch(w, 3, __ATOMIC_ACQUIRE);			\
	sum += __atomic_and_fetch(w, (type)~1, __ATOMIC_RELAXED);		\
	__atomic_fetch_or(w, 16, __ATOMIC_ACQUIRE);				\
	sum += __atomic_xor_fetch(w, (type)~4, __ATOMIC_RELAXED);		\
	sum += __atomic_nand_fetch(w, 64, __ATOMIC_ACQUIRE);			\
	__atomic_store_n(w, 0, __ATOMIC_RELAXED);				\
	return sum + __atomic_load_n(w, __ATOMIC_ACQUIRE);			\
}

/* The same word, only the operations that compile to plain movs. */
#define OBSERVE(name, type)							\
static __attribute__((noinline)) type name(type *w, type seed)			\
{										\
	type v, sum;								\
										\
	__atomic_load(w, &v, __ATOMIC_RELAXED);					\
	sum = v;								\
	__atomic_store_n(w, seed, __ATOMIC_RELAXED);				\
	__atomic_load(w, &v, __ATOMIC_ACQUIRE);					\
	return sum + v;								\
}

EXERCISE(exercise_u64, uint64_t)
EXERCISE(exercise_u32, uint32_t)
EXERCISE(exercise_u16, uint16_t)
EXERCISE(exercise_u8, uint8_t)
OBSERVE(observe_u64, uint64_t)
OBSERVE(observe_u32, uint32_t)
OBSERVE(observe_u16, uint16_t)
OBSERVE(observe_u8, uint8_t)

static __attribute__((noinline)) void bump_plain(void)
{
	plain_counter++;
}

static uint64_t next_seed(uint64_t seed)
{
	return seed * 6364136223846793005ULL + 1442695040888963407ULL;
}

static uint64_t exercise_round(uint64_t seed)
{
	return exercise_u64(&shared->w64, seed) + exercise_u32(&shared->w32, seed >> 32) +
	       exercise_u16(&shared->w16, seed >> 16) + exercise_u8(&shared->w8, seed >> 8);
}

static void *exerciser(void *arg)
{
	uint64_t seed = (uintptr_t)arg, sum = 0;

	for (long i = 0; i < rounds; i++) {
		seed = next_seed(seed);
		sum += exercise_round(seed);
	}
	return (void *)(uintptr_t)sum;
}

static void *observer(void *arg)
{
	uint64_t seed = (uintptr_t)arg, sum = 0;

	for (long i = 0; racy && i < rounds; i++)
		bump_plain();
	for (long i = 0; i < rounds; i++) {
		seed = next_seed(seed);
		sum += observe_u64(&shared->w64, seed) + observe_u32(&shared->w32, seed >> 32) +
		       observe_u16(&shared->w16, seed >> 16) + observe_u8(&shared->w8, seed >> 8);
	}
	return (void *)(uintptr_t)sum;
}

/* Two threads running fn, joined. */
static int run_threads(void *(*fn)(void *), uintptr_t seed)
{
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, fn, (void *)(seed + i))) {
			fprintf(stderr, "cannot create a thread\n");
			return 1;
		}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* The child: waits for the parent's first round (the pipe), then observes. */
static int child_main(int ready)
{
	char c;

	if (read(ready, &c, 1) != 1) {
		fprintf(stderr, "the parent did not start\n");
		return 1;
	}
	return run_threads(observer, 200);
}

int main(int argc, char **argv)
{
	int status, err, ready[2];
	pid_t child;

	if (argc > 1)
		rounds = atol(argv[1]);
	racy = argc > 2 && !strcmp(argv[2], "racy");
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (shared == MAP_FAILED || pipe(ready)) {
		perror("mmap or pipe");
		return 1;
	}
	if (racy)
		printf("plain counter at %p\n", (void *)&plain_counter);
	fflush(stdout);
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (!child)
		_exit(child_main(ready[0]));
	exercise_round(1);
	if (write(ready[1], "", 1) != 1)
		perror("write");
	err = run_threads(exerciser, 100);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		err = 1;
	printf("%ld rounds in 2 processes of 2 threads\n", rounds);
	return err;
}

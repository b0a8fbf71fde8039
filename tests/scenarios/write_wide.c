// SPDX-License-Identifier: GPL-2.0-only
/*
 * Accesses wider than 8 bytes: a 16-byte struct copied with one SSE move.
 * Such writes are never assumed atomic, and KCSAN does not compare values
 * wider than 8 bytes, so any conflicting access is reported, without a
 * "value changed:" line.
 *
 * Two pairings, picked by argv[1]:
 *   (none)  writer_a vs writer_b: two 16-byte stores
 *   read    reader vs writer_a:   a 16-byte load vs a 16-byte store
 *
 * Each writer copies its own pattern: the load from the pattern is a
 * 16-byte read nobody else writes, the store to shared is the racing one.
 *
 * gcc 12 -O1:  writer_a: movdqa pattern_a(%rip),%xmm0   (16-byte load, private)
 *                        movaps %xmm0,shared(%rip)      (16-byte store, racing)
 *              writer_b: the same from pattern_b
 *              reader:   movdqa shared(%rip),%xmm0      (16-byte load, racing)
 *                        movaps %xmm0,copy(%rip)        (16-byte store, private)
 */
#include <string.h>
#include "scenario.h"

/* Racy: about 10 s under kcsand (two probed accesses per iteration). */
#define ITERS 150000

struct pair {
	long lo, hi;
} __attribute__((aligned(16)));

struct pair shared;
struct pair copy;	/* Only the reader writes it. */
/* Only read; not const, so that gcc copies them rather than storing immediates. */
struct pair pattern_a = { 0x1111111111111111, 0x2222222222222222 };
struct pair pattern_b = { 0x3333333333333333, 0x4444444444444444 };

RACY void writer_a(void)
{
	shared = pattern_a;
}

RACY void writer_b(void)
{
	shared = pattern_b;
}

RACY void reader(void)
{
	copy = shared;
}

SCENARIO_LOOP(thread_a, writer_a())

SCENARIO_LOOP(thread_b, writer_b())

SCENARIO_LOOP(reader_thread, reader())

int main(int argc, char **argv)
{
	void *(*const writers[])(void *) = { thread_a, thread_b };
	void *(*const reader_writer[])(void *) = { reader_thread, thread_a };
	int with_reader = argc > 1 && !strcmp(argv[1], "read");

	run_threads(2, with_reader ? reader_writer : writers, (void *)scenario_iters(ITERS));
	return 0;
}

/* kcsand-test: name=write_wide args="--halt-on-error" iters=2000000 expect=report title="data-race in writer_a / writer_b" access="^write to 0x[0-9a-f]+ of 16 bytes by task [0-9]+ on cpu [0-9]+:$" access="^write to 0x[0-9a-f]+ of 16 bytes by task [0-9]+ on cpu [0-9]+:$" value_changed=no */
/* kcsand-test: name=write_wide_vs_read prog_args="read" args="--halt-on-error" iters=2000000 expect=report title="data-race in reader / writer_a" access="^read to 0x[0-9a-f]+ of 16 bytes by task [0-9]+ on cpu [0-9]+:$" access="^write to 0x[0-9a-f]+ of 16 bytes by task [0-9]+ on cpu [0-9]+:$" value_changed=no */

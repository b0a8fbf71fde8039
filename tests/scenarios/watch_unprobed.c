// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsanctl run --watch on a variable whose accessors are not probed.
 *
 * peek() reads level and poke() writes it from two threads, with nothing
 * ordering them, and neither function is probed (--functions tick): only a
 * hardware watchpoint on level can see them.  Every watch-th trap of the
 * reader holds its thread with a watchpoint armed; the writer's trap during
 * that window is a race, reported with both stacks and the hardware
 * watchpoint line.
 *
 * The threads run for a time, not a number of iterations: natively they
 * would be over before kcsanctl has armed the watchpoint in them.  They run
 * until the harness has the pair (stop=report): the first report may be a
 * one-sided one of unknown origin, so --halt-on-error would end the run too
 * early, and a fixed time is too short on a loaded machine.  tick() is
 * probed only because kcsanctl wants at least one site; it touches the
 * reader thread's own counter.
 *
 * gcc 12 -O1:  peek: mov level(%rip),%eax     (plain 4-byte load, not probed)
 *              poke: mov %edi,level(%rip)     (plain 4-byte store, not probed)
 */
#include "scenario.h"

/* Seconds each thread runs at most: stop=report ends the run at the pair. */
#define SECONDS 40

int level;
long ticks;	/* Only the reader thread touches it. */

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

SCENARIO_TIMED(reader_thread, SECONDS, peek(); if (!(i & 1023)) tick());
SCENARIO_TIMED(writer_thread, SECONDS, poke(i));

int main(void)
{
	void *(*const fn[])(void *) = { reader_thread, writer_thread };

	run_threads(2, fn, NULL);
	return 0;
}

/* kcsand-test: name=watch_unprobed needs=hwbp args="--functions tick --watch level" expect=report title="data-race in peek / poke" stop=report access="^read to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" access="^write to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" access="^hardware watchpoint: the (read|write) by task [0-9]+ was seen by a debug register, after it executed$" */
/* Where debug registers do not trap, --watch is refused with the reason. */
/* kcsand-test: name=watch_unprobed_refused needs=nohwbp args="--functions tick --watch level" expect=error log_re="^kcsand: watch: level: this machine's debug registers do not trap" */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsanctl run --watch on a 2-byte variable at an odd address, which no
 * debug register covers exactly: kcsand widens the watch to the aligned
 * 4 bytes around it, so its neighbours' accesses trap too.  The trap's
 * instruction tells what was accessed (issue 10, finding 9):
 *
 *   (none)   one thread writes the byte before odd_level, another reads the
 *            byte after it: both trap, neither touches odd_level, and no
 *            report may name them (before the decode, both were taken as
 *            4-byte accesses of the watched range: "data-race in
 *            read_after / write_before");
 *   level    the same threads race on odd_level itself: reported, as
 *            2-byte accesses (not the register's 4).
 *
 * The neighbours, which must stay silent, run a fixed time; the race on the
 * level runs until the report the case wants (stop=report), at most
 * LEVEL_SECONDS, as in watch_unprobed.c.  tick() is probed only because
 * kcsanctl wants at least one site.
 *
 * gcc 12 -O1:  write_before: movb %dil,cell(%rip)      read_after: movzbl cell+3(%rip),%eax
 *              poke_level:   movw %di,cell+1(%rip)     peek_level: movzwl cell+1(%rip),%eax
 */
#include <string.h>
#include "scenario.h"

/* kcsand-test: name=watch_neighbours needs=hwbp args="-v --functions tick --watch odd_level" expect=none log_re="hw_outside: [1-9]" */
/* kcsand-test: name=watch_neighbours_level needs=hwbp args="--functions tick --watch odd_level" prog_args="level" expect=report title="data-race in peek_level / poke_level" stop=report access="^read to 0x[0-9a-f]+ of 2 bytes by task [0-9]+ on cpu [0-9]+:$" access="^write to 0x[0-9a-f]+ of 2 bytes by task [0-9]+ on cpu [0-9]+:$" */
/* Where debug registers do not trap, --watch is refused with the reason. */
/* kcsand-test: name=watch_neighbours_refused needs=nohwbp args="--functions tick --watch odd_level" expect=error log_re="^kcsand: watch: odd_level: this machine's debug registers do not trap" */

#define SECONDS 4
#define LEVEL_SECONDS 40	/* a bound: stop=report ends the run at the pair */

struct cell {
	unsigned char before;
	unsigned short level;
	unsigned char after;
} __attribute__((packed));

struct cell cell __attribute__((aligned(4)));
long ticks;	/* Only the reader thread touches it. */

/* odd_level: a 2-byte variable at cell + 1, as --watch resolves names. */
asm(".globl odd_level\n\t.type odd_level, @object\n\t.size odd_level, 2\n\t"
    ".set odd_level, cell + 1");

RACY void write_before(int v)
{
	cell.before = v;
}

RACY int read_after(void)
{
	return cell.after;
}

RACY void poke_level(int v)
{
	cell.level = v;
}

RACY int peek_level(void)
{
	return cell.level;
}

RACY void tick(void)
{
	ticks++;
}

static int on_level;

SCENARIO_TIMED(reader_thread, on_level ? LEVEL_SECONDS : SECONDS,
	       if (on_level) peek_level(); else read_after(); if (!(i & 1023)) tick());
SCENARIO_TIMED(writer_thread, on_level ? LEVEL_SECONDS : SECONDS,
	       if (on_level) poke_level(i); else write_before(i));

int main(int argc, char **argv)
{
	void *(*const fn[])(void *) = { reader_thread, writer_thread };

	on_level = argc > 1 && !strcmp(argv[1], "level");
	run_threads(2, fn, NULL);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The plugin of racy_fork_plugin.c: the racing pair, in a library that the
 * forked child loads with dlopen().  Built without frame pointers, as the
 * program is (expect.tsv's nofp): only a CFI unwind, which must know where
 * this library is mapped, takes its stacks past these functions.
 */
static long mode;

__attribute__((noinline, noipa)) void store_left(void)
{
	mode = 1;
}

__attribute__((noinline, noipa)) void store_right(void)
{
	mode = 2;
}

/* A reader, else gcc drops the stores of a static nobody reads. */
long store_mode(void)
{
	return mode;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * A shared library with a racy counter: kcsanctl run --object probes it,
 * and the report names its functions from the library's own symbols.
 *
 * gcc 12 -O1 -fPIC:  lib_bump: mov lib_counter@GOTPCREL(%rip),%rax; addq $1,(%rax)
 */
long lib_counter;

__attribute__((noinline, noipa)) void lib_bump(void)
{
	lib_counter++;
}

__attribute__((noinline, noipa)) long lib_peek(void)
{
	return lib_counter;
}

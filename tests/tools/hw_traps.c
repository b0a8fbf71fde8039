// SPDX-License-Identifier: GPL-2.0-only
/*
 * hw_traps: whether this machine's user-mode debug registers trap, by the
 * check kcsand itself makes (daemon/hw/traps.c).  Exit status 0 when they
 * do; 1 when they do not, with the reason on stdout.  The test runners
 * choose between a scenario and its fallback twin with it (needs=).
 */
#include <stdio.h>
#include "hw/hwbp.h"

int main(void)
{
	const char *why = hwbp__no_traps_why();

	if (!why)
		return 0;
	printf("%s\n", why);
	return 1;
}

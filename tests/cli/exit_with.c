// SPDX-License-Identifier: GPL-2.0-only
/*
 * exit_with N [TEXT]: print TEXT, with no newline, and exit with status N.
 * exit_with kill: die by SIGTERM.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int status_seen;

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "kill"))
		raise(SIGTERM);
	status_seen = argc > 1 ? atoi(argv[1]) : 0;
	if (argc > 2)
		fputs(argv[2], stdout);
	return status_seen;
}

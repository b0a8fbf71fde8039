/* SPDX-License-Identifier: GPL-2.0-only */
/* kcsanctl's commands, one file each where they are large. */
#ifndef KCSAND_CLI_H
#define KCSAND_CLI_H

#include <stdio.h>

#define EXIT_RACE	66	/* TSan's convention: a race was reported */
#define EXIT_USAGE	2

int cmd_run(int argc, char **argv);
void run_help(FILE *out);

#endif

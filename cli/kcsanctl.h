/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kcsanctl's command tables, bpftool style: { "name", do_name, help, usage },
 * matched by unique prefix; `kcsanctl help` lists the tables' usage lines; an unknown command or bad arguments print
 * the command's help and exit 2.
 */
#ifndef KCSANCTL_H
#define KCSANCTL_H

#include <stdbool.h>
#include <stdio.h>

#define EXIT_USAGE	2
#define EXIT_NO_DAEMON	1
#define EXIT_RACE	66	/* TSan's convention: a race was reported */

/*
 * usage: the command's lines in `kcsanctl help`, on the first command of
 * those that share them (on | off); NULL on the others.
 */
struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	void (*help)(FILE *out);
	const char *usage;
};

/* -j: JSON output, for every command. */
extern bool json_output;
/* --socket PATH, else $KCSAND_SOCKET, else /run/kcsand.sock. */
extern const char *socket_path;

/* The command of cmds that name is a unique prefix of, or NULL. */
const struct cmd *cmd_find(const struct cmd *cmds, const char *name);
/* Run the subcommand argv[0] of cmds; help and exit status 2 when unknown. */
int cmd_dispatch(const struct cmd *cmds, int argc, char **argv, void (*help)(FILE *out));

/* Commands talking to the daemon (remote.c). */
extern const struct cmd remote_cmds[];
/* run [OPTIONS] -- PROG, and run --kernel (run.c). */
int cmd_run(int argc, char **argv);
void run_help(FILE *out);
/* summarize LOG... (summarize.c). */
int do_summarize(int argc, char **argv);
void summarize_help(FILE *out);

#endif

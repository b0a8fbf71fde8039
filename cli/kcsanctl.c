// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsanctl: command-line front end of kcsand.
 *
 * Commands are dispatched through a table, bpftool style, with unique
 * prefix matching.  `run` (run.c) embeds the engine; the daemon's commands
 * are in remote.c, `summarize` in summarize.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "engine/engine.h"
#include "kcsanctl.h"
#include "service/control.h"

bool json_output;
const char *socket_path = CTL_DEFAULT_SOCKET;

static int cmd_help(int argc, char **argv);

static const struct cmd local_cmds[] = {
	{ "run", cmd_run, run_help,
	  "  run [OPTIONS] -- PROG [ARGS]    run PROG under kcsand (kcsanctl help run)\n" },
	{ "summarize", do_summarize, summarize_help,
	  "  summarize LOG...                count the BUG: KCSAN: titles of logs\n" },
	{ "help", cmd_help, NULL,
	  "  help [COMMAND]                  this text, or a command's\n" },
	{},
};

/* The daemon's commands (remote.c), then the local ones: filled by main(). */
static struct cmd cmds[32];

static void print_usage_lines(FILE *out, const struct cmd *table)
{
	for (const struct cmd *c = table; c->name; c++)
		if (c->usage)
			fputs(c->usage, out);
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: kcsanctl [-j] [--socket PATH] COMMAND [ARGS...]\n"
		     "\n"
		     "Commands for a running kcsand (kcsand(8)):\n");
	print_usage_lines(out, remote_cmds);
	fprintf(out, "\nCommands that need no daemon:\n");
	print_usage_lines(out, local_cmds);
	fprintf(out,
		"\n"
		"Options:\n"
		"  -j, --json       JSON output (every command)\n"
		"  --socket PATH    the daemon's socket (default $KCSAND_SOCKET, else %s)\n"
		"\n"
		"Commands may be abbreviated to a unique prefix.  Exit status: 0 ok, 1 error or\n"
		"no daemon running, 2 bad usage.\n",
		CTL_DEFAULT_SOCKET);
}

const struct cmd *cmd_find(const struct cmd *table, const char *name)
{
	const struct cmd *found = NULL;
	size_t len = strlen(name);

	if (!len)
		return NULL;
	for (const struct cmd *c = table; c->name; c++) {
		if (!strcmp(c->name, name))
			return c;
		if (!strncmp(c->name, name, len)) {
			if (found)
				return NULL;	/* ambiguous */
			found = c;
		}
	}
	return found;
}

int cmd_dispatch(const struct cmd *table, int argc, char **argv, void (*help)(FILE *out))
{
	const struct cmd *c = argc > 0 ? cmd_find(table, argv[0]) : NULL;

	if (!c) {
		if (argc > 0)
			fprintf(stderr, "kcsanctl: unknown or ambiguous command '%s'\n", argv[0]);
		help(stderr);
		return EXIT_USAGE;
	}
	return c->fn(argc, argv);
}

static int cmd_help(int argc, char **argv)
{
	const struct cmd *c = argc > 1 ? cmd_find(cmds, argv[1]) : NULL;

	if (c && c->help)
		c->help(stdout);
	else
		usage(stdout);
	return 0;
}

/* -j anywhere among a daemon command's arguments, as bpftool allows. */
static int take_json_flag(int argc, char **argv)
{
	int j = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json"))
			json_output = true;
		else
			argv[j++] = argv[i];
	}
	argv[j] = NULL;
	return j;
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	size_t n = 0;
	int i;

	for (const struct cmd *r = remote_cmds; r->name; r++)
		cmds[n++] = *r;
	for (const struct cmd *r = local_cmds; r->name; r++)
		cmds[n++] = *r;
	if (getenv("KCSAND_SOCKET") && *getenv("KCSAND_SOCKET"))
		socket_path = getenv("KCSAND_SOCKET");

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			json_output = true;
		} else if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			socket_path = argv[++i];
		} else if (!strncmp(argv[i], "--socket=", 9)) {
			socket_path = argv[i] + 9;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			printf("kcsanctl %s\n", KCSAND_VERSION);
			return 0;
		} else {
			fprintf(stderr, "kcsanctl: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	c = cmd_find(cmds, argv[i]);
	if (!c) {
		fprintf(stderr, "kcsanctl: unknown or ambiguous command '%s'\n", argv[i]);
		usage(stderr);
		return EXIT_USAGE;
	}
	argc -= i;
	argv += i;
	if (c->fn != cmd_run)
		argc = take_json_flag(argc, argv);
	return c->fn(argc, argv);
}

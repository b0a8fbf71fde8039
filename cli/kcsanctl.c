// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsanctl: command-line front end of kcsand.
 *
 * Commands are dispatched through a table, bpftool style, with unique
 * prefix matching.  `run` (cli/run.c) embeds the engine.
 */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "engine.h"


struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	void (*help)(FILE *out);
};

static int cmd_help(int argc, char **argv);

static const struct cmd cmds[] = {
	{ "run", cmd_run, run_help },
	{ "help", cmd_help, NULL },
	{},
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: kcsanctl COMMAND [ARGS...]\n"
		"\n"
		"Commands:\n"
		"  run [OPTIONS] -- PROG [ARGS]   run PROG under kcsand (kcsanctl help run)\n"
		"  help [COMMAND]                 this text, or a command's\n");
}

static const struct cmd *find_cmd(const char *name)
{
	const struct cmd *found = NULL;
	size_t len = strlen(name);

	for (const struct cmd *c = cmds; c->name; c++) {
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

static int cmd_help(int argc, char **argv)
{
	const struct cmd *c = argc > 1 ? find_cmd(argv[1]) : NULL;

	if (c && c->help)
		c->help(stdout);
	else
		usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	c = find_cmd(argv[1]);
	if (!c) {
		fprintf(stderr, "kcsanctl: unknown command '%s'\n", argv[1]);
		usage(stderr);
		return EXIT_USAGE;
	}
	return c->fn(argc - 1, argv + 1);
}

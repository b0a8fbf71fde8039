// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsand: attach the engine to a binary and print races until stopped.
 *
 * This is the engine's standalone front end: the configuration file, the
 * control socket and the sinks of the service build on it.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "engine.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: kcsand --binary PATH [--pid PID | --all] [OPTIONS]\n"
		"\n"
		"Probe the memory-access instructions of PATH and report data races in KCSAN's\n"
		"format until SIGINT or SIGTERM.\n"
		"\n"
		"  --binary PATH         the ELF object to probe (repeatable)\n"
		"  --pid PID             trace this process and its descendants (repeatable)\n"
		"  --all                 trace every process that runs PATH\n"
		"  --functions GLOB,...  probe only the functions matching these globs\n"
		"  --param NAME=VALUE    set a parameter (--param help lists them)\n"
		"  --marks FILE          marked / data_race accesses by hand (docs/marking.md)\n"
		"  --source-dir DIR      look for sources here first, for source marking\n"
		"  --json                one JSON object per report\n"
		"  -v, --verbose         more messages\n");
}

int main(int argc, char **argv)
{
	enum { OPT_BINARY = 256, OPT_PID, OPT_ALL, OPT_FUNCS, OPT_PARAM, OPT_JSON,
	       OPT_MARKS, OPT_SOURCE_DIR };
	static const struct option longopts[] = {
		{ "binary", required_argument, NULL, OPT_BINARY },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "functions", required_argument, NULL, OPT_FUNCS },
		{ "marks", required_argument, NULL, OPT_MARKS },
		{ "source-dir", required_argument, NULL, OPT_SOURCE_DIR },
		{ "param", required_argument, NULL, OPT_PARAM },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *binaries[16];
	pid_t pids[64];
	int nr_binaries = 0, nr_pids = 0, opt, ret = 2;
	struct engine_opts o;
	struct engine *e = NULL;
	char *end;

	engine_opts__init(&o);
	while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_BINARY:
			if (nr_binaries == 16) {
				fprintf(stderr, "kcsand: at most 16 --binary\n");
				return 2;
			}
			binaries[nr_binaries++] = optarg;
			break;
		case OPT_PID:
			errno = 0;
			pids[nr_pids] = strtol(optarg, &end, 10);
			if (errno || *end || pids[nr_pids] <= 0 || nr_pids == 63) {
				fprintf(stderr, "kcsand: --pid: bad pid '%s'\n", optarg);
				return 2;
			}
			nr_pids++;
			break;
		case OPT_ALL:
			o.params.trace_all = 1;
			break;
		case OPT_FUNCS:
			o.functions = optarg;
			break;
		case OPT_MARKS:
			o.marks_file = optarg;
			break;
		case OPT_SOURCE_DIR:
			o.source_dir = optarg;
			break;
		case OPT_PARAM:
			if (!strcmp(optarg, "help")) {
				params_print(stdout);
				return 0;
			}
			if (engine_opts__set_kv(&o, optarg))
				return 2;
			break;
		case OPT_JSON:
			o.json = true;
			break;
		case 'v':
			o.verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !nr_binaries || (!nr_pids && !o.params.trace_all)) {
		fprintf(stderr, "kcsand: need --binary and one of --pid or --all\n");
		usage(stderr);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "kcsand: needs root to load BPF programs and place uprobes\n");
		return 2;
	}
	if (engine__new(&o, &e))
		goto out;
	for (int i = 0; i < nr_binaries; i++)
		if (engine__add_object(e, binaries[i], NULL) < 0)
			goto out;
	if (engine__load(e) || engine__attach(e))
		goto out;
	for (int i = 0; i < nr_pids; i++)
		if (engine__add_pid(e, pids[i]))
			goto out;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "kcsand: %zu sites attached; stop with SIGINT or SIGTERM\n",
		engine__nr_sites(e));
	while (!stop)
		engine__poll(e, 200);
	engine__poll(e, 0);
	engine__print_summary(e, stderr);
	ret = 0;
out:
	engine__free(e);
	return ret;
}

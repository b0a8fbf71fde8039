// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsanctl: command-line front end of kcsand.
 *
 * Commands are dispatched through a table, bpftool style, with unique
 * prefix matching.  `run` embeds the engine: it attaches to PROG before PROG
 * executes its first instruction, like a sanitizer would.
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
#include "engine.h"

#define EXIT_RACE	66	/* TSan's convention: a race was reported */
#define EXIT_USAGE	2

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	void (*help)(FILE *out);
};

static void run_help(FILE *out)
{
	fprintf(out,
		"Usage: kcsanctl run [OPTIONS] -- PROG [ARGS...]\n"
		"\n"
		"Run PROG with a uprobe on every memory-access instruction of its functions and\n"
		"report data races in KCSAN's format on stderr.  Exit status: PROG's, or 66 when\n"
		"a race was reported and PROG exited 0.\n"
		"\n"
		"Options:\n"
		"  --skip-watch N        plain accesses per CPU between watchpoints (default %u)\n"
		"  --udelay-task US      stall of a watcher, in µs (default %u)\n"
		"  --functions GLOB,...  probe only the functions matching these globs\n"
		"  --overhead-budget PCT arm a random subset of the sites, readjusted from their\n"
		"                        hit rates, so that probes add at most PCT%% to PROG's\n"
		"                        own time after %u CPU-ms of warm-up (default %u; 100: all)\n"
		"  --object PATH         also probe this shared object (repeatable)\n"
		"  --watch SYM|ADDR[:LEN] watch this variable of PROG with a hardware watchpoint\n"
		"                        and report every conflicting pair of accesses to it,\n"
		"                        probed or not (repeatable, up to 4 debug registers)\n"
		"  --param NAME=VALUE    set any parameter (repeatable; --param help lists them)\n"
		"  --json                one JSON object per report instead of KCSAN's text\n"
		"  --halt-on-error       stop PROG at the first report (exit status 66)\n"
		"  --per-site-links      one uprobe link per site, as on kernels without\n"
		"                        uprobe_multi (< 6.6); slow to detach\n"
		"  -v, --verbose         say what is decoded and attached (twice: libbpf debug)\n",
		USER_DEFAULT_SKIP_WATCH, USER_DEFAULT_UDELAY_TASK, DEFAULT_SAMPLER_WARMUP_CPU_MS,
		DEFAULT_OVERHEAD_BUDGET);
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

/* Resolve PROG as execvp(3) would, so that the probes go on the file that runs. */
static char *resolve_prog(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(prog, '/'))
		return realpath(prog, NULL);
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		int len = end - path;

		snprintf(buf, sizeof(buf), "%.*s/%s", len ? len : 1, len ? path : ".", prog);
		if (access(buf, X_OK) == 0)
			return realpath(buf, NULL);
		path = *end ? end + 1 : end;
	}
	errno = ENOENT;
	return NULL;
}

/*
 * --watch needs the program's own mapping, so it is armed once the child has
 * exec'd: the program runs unwatched for the first moments (the time to
 * see the new mapping, typically well under a millisecond).
 */
static int watch_after_exec(struct engine *e, pid_t child, const char *prog,
			    const char *const *watches, int n)
{
	for (int i = 0; i < n; i++) {
		int err, tries = 0;

		for (;;) {
			err = engine__watch(e, child, prog, watches[i]);
			if (err != -EAGAIN || tries++ == 5000)
				break;
			usleep(200);
		}
		if (err) {
			if (err == -EAGAIN)
				fprintf(stderr, "kcsanctl: run: --watch %s: %s never showed up in %d\n",
					watches[i], prog, child);
			return err;
		}
	}
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	enum { OPT_SKIP = 256, OPT_UDELAY, OPT_FUNCS, OPT_OBJECT, OPT_PARAM, OPT_JSON, OPT_HALT, OPT_PER_SITE,
	       OPT_BUDGET, OPT_WATCH };
	static const struct option longopts[] = {
		{ "skip-watch", required_argument, NULL, OPT_SKIP },
		{ "udelay-task", required_argument, NULL, OPT_UDELAY },
		{ "functions", required_argument, NULL, OPT_FUNCS },
		{ "object", required_argument, NULL, OPT_OBJECT },
		{ "param", required_argument, NULL, OPT_PARAM },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "halt-on-error", no_argument, NULL, OPT_HALT },
		{ "per-site-links", no_argument, NULL, OPT_PER_SITE },
		{ "overhead-budget", required_argument, NULL, OPT_BUDGET },
		{ "watch", required_argument, NULL, OPT_WATCH },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct engine_opts o;
	struct engine *e = NULL;
	const char *objects[16], *watches[KCSAND_HW_SLOTS];
	int nr_watches = 0;
	int nr_objects = 0, opt, gate[2] = { -1, -1 }, status = 0, ret = EXIT_USAGE;
	char *prog = NULL;
	pid_t child = -1;
	bool halt = false, halted = false;

	engine_opts__init(&o);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+vh", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_SKIP:
			if (engine_opts__set(&o, "skip_watch", optarg))
				return EXIT_USAGE;
			break;
		case OPT_UDELAY:
			if (engine_opts__set(&o, "udelay_task", optarg))
				return EXIT_USAGE;
			break;
		case OPT_FUNCS:
			o.functions = optarg;
			break;
		case OPT_OBJECT:
			if (nr_objects == (int)(sizeof(objects) / sizeof(objects[0]))) {
				fprintf(stderr, "kcsanctl: run: at most %d --object\n", nr_objects);
				return EXIT_USAGE;
			}
			objects[nr_objects++] = optarg;
			break;
		case OPT_PARAM:
			if (!strcmp(optarg, "help")) {
				params_print(stdout);
				return 0;
			}
			if (engine_opts__set_kv(&o, optarg)) {
				params_print(stderr);
				return EXIT_USAGE;
			}
			break;
		case OPT_JSON:
			o.json = true;
			break;
		case OPT_HALT:
			halt = true;
			break;
		case OPT_PER_SITE:
			o.force_per_site_links = true;
			break;
		case OPT_BUDGET:
			if (engine_opts__set(&o, "overhead_budget", optarg))
				return EXIT_USAGE;
			break;
		case OPT_WATCH:
			if (nr_watches == KCSAND_HW_SLOTS) {
				fprintf(stderr, "kcsanctl: run: at most %d --watch (debug registers)\n",
					KCSAND_HW_SLOTS);
				return EXIT_USAGE;
			}
			watches[nr_watches++] = optarg;
			break;
		case 'v':
			o.verbose++;
			break;
		case 'h':
			run_help(stdout);
			return 0;
		default:
			run_help(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "kcsanctl: run: no program given\n");
		run_help(stderr);
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "kcsanctl: run: needs root (BPF programs and uprobes need "
				"CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN)\n");
		return EXIT_USAGE;
	}
	prog = resolve_prog(argv[optind]);
	if (!prog) {
		fprintf(stderr, "kcsanctl: run: cannot find %s: %s\n", argv[optind],
			strerror(errno));
		return EXIT_USAGE;
	}

	if (engine__new(&o, &e))
		goto out;
	if (engine__add_object(e, prog, NULL) < 0)
		goto out;
	for (int i = 0; i < nr_objects; i++)
		if (engine__add_object(e, objects[i], NULL) < 0)
			goto out;
	if (!engine__nr_sites(e)) {
		fprintf(stderr, "kcsanctl: run: no memory-access instruction to probe in %s%s%s\n",
			prog, o.functions ? " matching " : "", o.functions ? o.functions : "");
		goto out;
	}
	if (engine__load(e) || engine__attach(e))
		goto out;

	/* The child waits on the gate until it is traced, then execs. */
	if (pipe2(gate, O_CLOEXEC)) {
		perror("kcsanctl: run: pipe");
		goto out;
	}
	child = fork();
	if (child < 0) {
		perror("kcsanctl: run: fork");
		goto out;
	}
	if (child == 0) {
		char c;

		close(gate[1]);
		if (read(gate[0], &c, 1) != 1)
			_exit(127);
		execv(prog, &argv[optind]);
		fprintf(stderr, "kcsanctl: run: cannot execute %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
	close(gate[0]);
	gate[0] = -1;
	if (engine__add_pid(e, child)) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		goto out;
	}
	if (o.verbose)
		fprintf(stderr, "kcsanctl: run: %zu sites attached, starting %s (pid %d)\n",
			engine__nr_sites(e), prog, child);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	if (write(gate[1], "g", 1) != 1) {
		perror("kcsanctl: run: cannot start the child");
		kill(child, SIGKILL);
	}
	close(gate[1]);
	gate[1] = -1;
	if (nr_watches && watch_after_exec(e, child, prog, watches, nr_watches)) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		goto out;
	}

	for (;;) {
		pid_t w;

		engine__poll(e, 100);
		if (halt && engine__nr_reports(e) && !halted) {
			/* TSan's halt_on_error: the first report ends the run. */
			kill(child, SIGKILL);
			halted = true;
		}
		if (got_signal) {
			/* Forward once; the child decides how to end. */
			kill(child, got_signal);
			got_signal = 0;
		}
		w = waitpid(child, &status, WNOHANG);
		if (w == child)
			break;
		if (w < 0 && errno != EINTR) {
			perror("kcsanctl: run: waitpid");
			break;
		}
	}
	/* Reports of the last moments are still in the ring buffer. */
	engine__poll(e, 0);
	engine__print_summary(e, stderr);

	if (WIFEXITED(status))
		ret = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		ret = 128 + WTERMSIG(status);
	if ((ret == 0 || halted) && engine__nr_reports(e))
		ret = EXIT_RACE;
out:
	if (gate[0] >= 0)
		close(gate[0]);
	if (gate[1] >= 0)
		close(gate[1]);
	engine__free(e);
	free(prog);
	return ret;
}

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

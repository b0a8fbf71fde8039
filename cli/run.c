// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsanctl run: the engine embedded, the way a sanitizer is used.
 *
 * User mode: PROG is forked, held on a pipe until its probes are attached
 * and its pid is traced, then exec'd, so it never runs an unprobed
 * instruction.  Kernel mode: kprobes go on the kernel functions named by
 * --probe and hardware watchpoints on the variables named by --watch, then
 * the workload runs (or --duration passes), then they come off.  Either
 * way the exit status says whether a race was reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "engine/engine.h"
#include "kcsanctl.h"
#include "report/report.h"
#include "service/kmsg.h"

#define MAX_OBJECTS	16
#define MAX_PROBES	64

/* A parameter's default in a mode, from the one table (params.c). */
static unsigned int param_default(const char *name, enum param_mode mode)
{
	return param__find(name)->def[mode];
}

/* What kcsanctl run does, and how it is called. */
static void print_usage(FILE *out)
{
	fputs(
		"Usage: kcsanctl run [OPTIONS] -- PROG [ARGS...]\n"
		"       kcsanctl run --kernel --probe SPEC... | --watch SYM|ADDR[:LEN]... [OPTIONS]\n"
		"                    [--duration S] [-- CMD...]\n"
		"\n"
		"Run PROG with a uprobe on every memory-access instruction of its functions and\n"
		"report data races in KCSAN's format on stderr.  Exit status: PROG's, or 66 when\n"
		"a race was reported and PROG exited 0.\n"
		"\n"
		"With --kernel, put a kprobe on every memory access of the kernel functions that\n"
		"SPEC names (GLOB, module:NAME or FUNC+0xOFF), and a hardware watchpoint on every\n"
		"CPU for each --watch (a kallsyms variable or a kernel address), run CMD (or wait\n"
		"S seconds), and detach.  Exit status: 66 when a race was reported, else CMD's.\n"
		"\n", out);
}

/* The options of kernel mode alone (run_help's second half). */
static void kernel_help(FILE *out)
{
	fprintf(out,
		"  --kernel              kernel mode (kprobes)\n"
		"  --probe SPEC          kernel functions to probe (repeatable, with --kernel)\n"
		"  --duration S          kernel mode: watch for S seconds; with CMD, end CMD\n"
		"                        (SIGTERM) when S seconds are up\n"
		"  --sample MODE         kernel mode: kprobes (a kprobe on every site) or\n"
		"                        breakpoints (debug registers sample a few sites at a\n"
		"                        time, no kprobe); default: breakpoints from %u sites on\n"
		"  --sample-period US    breakpoints: how long each set of sites stays sampled\n"
		"                        (default: from --overhead-budget, starting at %u µs)\n"
		"  --pin GLOB,...        breakpoints: the sites of these functions (of those\n"
		"                        --probe chose) take turns on a register of their own,\n"
		"                        so each is checked when it runs, however many sites\n"
		"                        the cycle has (implies --sample breakpoints)\n"
		"  --free-debug-regs N   kernel mode: leave N debug registers to a debugger\n"
		"  --kcsan-exempt        kernel mode: also probe what KCSAN leaves uninstrumented\n"
		"  --kernel-debug PATH   a vmlinux or NAME.ko with DWARF: marking, file:line\n"
		"                        in kernel frames, functions' sizes from its symbol table\n"
		"                        (Debian: /usr/lib/debug/boot/vmlinux-RELEASE)\n",
		KBP_AUTO_MIN_SITES, KBP_DEFAULT_PERIOD_US);
}

void run_help(FILE *out)
{
	const enum param_mode U = PARAM_MODE_USER, K = PARAM_MODE_KERNEL;

	print_usage(out);
	fprintf(out,
		"Options:\n"
		"  --skip-watch N        plain accesses per CPU between watchpoints (default %u;\n"
		"                        kernel mode %u)\n"
		"  --udelay-task US      stall of a watcher, in µs (default %u; kernel mode %u)\n"
		"  --functions GLOB,...  probe only the functions matching these globs\n"
		"  --overhead-budget PCT arm a subset of the sites, readjusted from their hit\n"
		"                        rates, so that probes add at most PCT%% to PROG's own\n"
		"                        time (default %u; 100: all); each site is armed for its\n"
		"                        first %u hits, then backs off; kernel mode: to the\n"
		"                        machine's busy time, after %u CPU-ms of it with every\n"
		"                        site armed, and the traps of disarmed kprobes are a\n"
		"                        floor outside the budget\n"
		"  --object PATH         also probe this shared object (repeatable)\n"
		"  --watch SYM|ADDR[:LEN] watch this variable of PROG (with --kernel: of the kernel\n"
		"                        or a module) with a hardware watchpoint and report every\n"
		"                        conflicting pair of accesses to it, probed or not\n"
		"                        (repeatable, up to 4 debug registers)\n"
		"  --param NAME=VALUE    set any parameter (repeatable; --param help lists them)\n"
		"  --json                JSON objects, one a line: each report, and the summary\n"
		"  --output FILE         write reports to FILE ('-': stdout) instead of stderr\n"
		"  --stats FILE          write every counter to FILE at the end, in the form of\n"
		"                        the summary line of -v\n"
		"  --kmsg                also write each report to the kernel log (/dev/kmsg),\n"
		"                        line by line in KCSAN's layout (at most %u per %u s)\n"
		"  --halt-on-error       stop PROG at the first report (exit status 66)\n"
		"  --marks FILE          mark accesses by hand: lines 'FUNC|FUNC+0xOFF|FILE:LINE\n"
		"                        marked|data_race' (docs/marking.md)\n"
		"  --source-dir DIR      look for sources here first (marking by READ_ONCE & co.)\n"
		"  --no-marking          mark only lock-prefixed and xchg accesses (no DWARF,\n"
		"                        source or marks file): to measure what marking removes\n"
		"  --no-history          only KCSAN's watchpoints: no happens-before history,\n"
		"                        no probes on the sync functions of libc and libgomp\n"
		"  --per-site-links      one uprobe link per site, as on kernels without\n"
		"                        uprobe_multi (< 6.6); slow to detach\n",
		param_default("skip_watch", U), param_default("skip_watch", K),
		param_default("udelay_task", U), param_default("udelay_task", K),
		param_default("overhead_budget", U), param_default("sampler_backoff_hits", U),
		param_default("sampler_warmup_cpu_ms", K), KMSG_BURST, KMSG_INTERVAL_MS / 1000);
	kernel_help(out);
	fputs("  -v, --verbose         what is decoded and attached, every site, plain or\n"
	      "                        marked and why (twice: what marked it; libbpf debug);\n"
	      "                        every counter in the summary line\n", out);
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
		if (err < 0) {
			if (err == -EAGAIN)
				fprintf(stderr, "kcsanctl: run: --watch %s: %s never showed up in %d\n",
					watches[i], prog, child);
			return err;
		}
	}
	return 0;
}

#define MAX_PARAMS	64

struct run_args {
	struct engine_opts o;
	const char *objects[MAX_OBJECTS];
	int nr_objects;
	const char *probes[MAX_PROBES];
	int nr_probes;
	const char *kernel_debug[MAX_OBJECTS];
	size_t nr_kernel_debug;
	const char *watches[KCSAND_HW_SLOTS];
	int nr_watches;
	/* Parameters given, in order: applied on the mode's defaults once the mode is known. */
	struct {
		const struct param_desc *p;
		unsigned int v;
	} params[MAX_PARAMS];
	int nr_params;
	bool halt;
	bool kmsg;
	double duration;
	const char *output;
	const char *stats;	/* --stats FILE: every counter, also without -v */
};

enum {
	OPT_SKIP = 256, OPT_UDELAY, OPT_FUNCS, OPT_OBJECT, OPT_PARAM, OPT_JSON, OPT_HALT,
	OPT_PER_SITE, OPT_KERNEL, OPT_PROBE, OPT_DURATION, OPT_OUTPUT, OPT_MARKS, OPT_KMSG,
	OPT_SAMPLE, OPT_SAMPLE_PERIOD, OPT_STATS, OPT_FREE_REGS, OPT_KCSAN_EXEMPT,
	OPT_SOURCE_DIR, OPT_KERNEL_DEBUG, OPT_BUDGET, OPT_WATCH, OPT_NO_MARKING, OPT_NO_HISTORY,
	OPT_PIN,
};

static const struct option run_longopts[] = {
	{ "skip-watch", required_argument, NULL, OPT_SKIP },
	{ "udelay-task", required_argument, NULL, OPT_UDELAY },
	{ "functions", required_argument, NULL, OPT_FUNCS },
	{ "object", required_argument, NULL, OPT_OBJECT },
	{ "param", required_argument, NULL, OPT_PARAM },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "halt-on-error", no_argument, NULL, OPT_HALT },
	{ "per-site-links", no_argument, NULL, OPT_PER_SITE },
	{ "kernel", no_argument, NULL, OPT_KERNEL },
	{ "probe", required_argument, NULL, OPT_PROBE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "stats", required_argument, NULL, OPT_STATS },
	{ "kmsg", no_argument, NULL, OPT_KMSG },
	{ "sample", required_argument, NULL, OPT_SAMPLE },
	{ "sample-period", required_argument, NULL, OPT_SAMPLE_PERIOD },
	{ "free-debug-regs", required_argument, NULL, OPT_FREE_REGS },
	{ "kcsan-exempt", no_argument, NULL, OPT_KCSAN_EXEMPT },
	{ "pin", required_argument, NULL, OPT_PIN },
	{ "marks", required_argument, NULL, OPT_MARKS },
	{ "source-dir", required_argument, NULL, OPT_SOURCE_DIR },
	{ "kernel-debug", required_argument, NULL, OPT_KERNEL_DEBUG },
	{ "overhead-budget", required_argument, NULL, OPT_BUDGET },
	{ "watch", required_argument, NULL, OPT_WATCH },
	{ "no-marking", no_argument, NULL, OPT_NO_MARKING },
	{ "no-history", no_argument, NULL, OPT_NO_HISTORY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* Append s to list (n entries of max), or say which option has too many. */
static int push_arg(const char **list, int *n, int max, const char *s, const char *opt)
{
	if (*n == max) {
		fprintf(stderr, "kcsanctl: run: at most %d %s\n", max, opt);
		return -1;
	}
	list[(*n)++] = s;
	return 0;
}

/*
 * A parameter from --param NAME=VALUE (name NULL) or from its own option:
 * checked against the table now, applied once the mode is known.
 */
static int add_param(struct run_args *a, const char *name, const char *text)
{
	const struct param_desc *p = name ? param__find(name) : NULL;
	char err[256];
	unsigned int v;
	int ret;

	ret = name ? param__parse(p, text, &v, err, sizeof(err)) :
		     param__parse_kv(text, &p, &v, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "kcsanctl: run: %s\n", err);
		if (!name)
			param__print_all(stderr);
		return -1;
	}
	if (a->nr_params == MAX_PARAMS) {
		fprintf(stderr, "kcsanctl: run: at most %d parameters\n", MAX_PARAMS);
		return -1;
	}
	a->params[a->nr_params].p = p;
	a->params[a->nr_params++].v = v;
	return 0;
}

static int add_kernel_debug(struct run_args *a, const char *path)
{
	if (access(path, R_OK)) {
		fprintf(stderr, "kcsanctl: run: --kernel-debug %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (a->nr_kernel_debug == MAX_OBJECTS) {
		fprintf(stderr, "kcsanctl: run: at most %d --kernel-debug\n", MAX_OBJECTS);
		return -1;
	}
	a->kernel_debug[a->nr_kernel_debug++] = path;
	a->o.kernel_debug = a->kernel_debug;
	a->o.nr_kernel_debug = a->nr_kernel_debug;
	return 0;
}

static int set_duration(struct run_args *a, const char *text)
{
	char *end;

	errno = 0;
	a->duration = strtod(text, &end);
	if (errno || *end || a->duration <= 0 || a->duration > 86400) {
		fprintf(stderr, "kcsanctl: run: --duration: bad number of seconds '%s'\n", text);
		return -1;
	}
	return 0;
}

/* One option of run_longopts: 0, or -1 with the reason on stderr. */
static int parse_sample(struct run_args *a, int opt, const char *arg);

/* An option without a value: 0, or -1 when opt is none of them. */
static int parse_flag(struct run_args *a, int opt)
{
	switch (opt) {
	case OPT_JSON:
		a->o.json = true;
		break;
	case OPT_HALT:
		a->halt = true;
		a->o.max_reports = 1;
		break;
	case OPT_PER_SITE:
		a->o.force_per_site_links = true;
		break;
	case OPT_KERNEL:
		a->o.kernel = true;
		break;
	case OPT_KMSG:
		a->kmsg = true;
		break;
	case OPT_NO_MARKING:
		a->o.no_marking = true;
		break;
	case OPT_NO_HISTORY:
		a->o.history = false;
		break;
	case OPT_KCSAN_EXEMPT:
		a->o.kcsan_exempt = true;
		break;
	case 'v':
		a->o.verbose++;
		break;
	default:
		return -1;
	}
	return 0;
}

static int parse_opt(struct run_args *a, int opt, char *arg)
{
	switch (opt) {
	case OPT_SKIP:
		return add_param(a, "skip_watch", arg);
	case OPT_UDELAY:
		return add_param(a, "udelay_task", arg);
	case OPT_BUDGET:
		return add_param(a, "overhead_budget", arg);
	case OPT_PARAM:
		if (!strcmp(arg, "help")) {
			param__print_all(stdout);
			exit(0);
		}
		return add_param(a, NULL, arg);
	case OPT_OBJECT:
		return push_arg(a->objects, &a->nr_objects, MAX_OBJECTS, arg, "--object");
	case OPT_PROBE:
		return push_arg(a->probes, &a->nr_probes, MAX_PROBES, arg, "--probe");
	case OPT_WATCH:
		return push_arg(a->watches, &a->nr_watches, KCSAND_HW_SLOTS, arg,
				"--watch (debug registers)");
	case OPT_KERNEL_DEBUG:
		return add_kernel_debug(a, arg);
	case OPT_DURATION:
		return set_duration(a, arg);
	case OPT_FUNCS:
		a->o.functions = arg;
		break;
	case OPT_PIN:
		a->o.pin = arg;
		break;
	case OPT_OUTPUT:
		a->output = arg;
		break;
	case OPT_STATS:
		a->stats = arg;
		break;
	case OPT_SAMPLE:
	case OPT_SAMPLE_PERIOD:
	case OPT_FREE_REGS:
		return parse_sample(a, opt, arg);
	case OPT_MARKS:
		a->o.marks_file = arg;
		break;
	case OPT_SOURCE_DIR:
		a->o.source_dir = arg;
		break;
	case 'h':
		run_help(stdout);
		exit(0);
	default:
		return parse_flag(a, opt);
	}
	return 0;
}

/* --sample kprobes|breakpoints, --sample-period US and --free-debug-regs N. */
static int parse_sample(struct run_args *a, int opt, const char *arg)
{
	char *end;

	if (opt == OPT_FREE_REGS) {
		errno = 0;
		a->o.free_regs = strtoul(arg, &end, 10);
		if (!errno && !*end && *arg && a->o.free_regs < KCSAND_HW_SLOTS)
			return 0;
		fprintf(stderr, "kcsanctl: run: --free-debug-regs: bad value '%s' (expected 0 to "
				"%d)\n", arg, KCSAND_HW_SLOTS - 1);
		return -1;
	}
	if (opt == OPT_SAMPLE_PERIOD) {
		errno = 0;
		a->o.kbp_period_us = strtoul(arg, &end, 10);
		a->o.kbp_period_fixed = true;
		if (!errno && !*end && a->o.kbp_period_us >= 100 && a->o.kbp_period_us <= 10000000)
			return 0;
		fprintf(stderr, "kcsanctl: run: --sample-period: bad value '%s' (expected "
				"100..10000000 µs)\n", arg);
		return -1;
	}
	if (!strcmp(arg, "kprobes"))
		a->o.sample = ENGINE_SAMPLE_KPROBES;
	else if (!strcmp(arg, "breakpoints"))
		a->o.sample = ENGINE_SAMPLE_BREAKPOINTS;
	else {
		fprintf(stderr, "kcsanctl: run: --sample: '%s' is neither kprobes nor breakpoints\n",
			arg);
		return -1;
	}
	return 0;
}

/* Debug registers: --watch first, one for escalation, sampling the rest. */
static int kbp_registers(struct run_args *a)
{
	unsigned int taken = a->nr_watches + a->o.free_regs;

	if (taken > KCSAND_HW_SLOTS - 1) {
		fprintf(stderr, "kcsanctl: run: %d --watch and --free-debug-regs %u leave no debug "
				"register for escalation (x86 has %d)\n", a->nr_watches,
			a->o.free_regs, KCSAND_HW_SLOTS);
		return -1;
	}
	a->o.kbp_regs = KCSAND_HW_SLOTS - 1 - taken;
	if (a->o.sample == ENGINE_SAMPLE_BREAKPOINTS && !a->o.kbp_regs) {
		fprintf(stderr, "kcsanctl: run: --sample breakpoints needs a debug register: at most "
				"%d --watch and --free-debug-regs together with it\n",
			KCSAND_HW_SLOTS - 2);
		return -1;
	}
	return 0;
}

/* What each mode needs and refuses, once every option is read. */
static int check_mode(const struct run_args *a, bool has_cmd)
{
	const char *why = NULL;

	if (a->o.kernel) {
		if (!a->nr_probes && !a->nr_watches)
			why = "--kernel needs at least one --probe SPEC or --watch SYMBOL|ADDRESS";
		else if (a->nr_objects || a->o.functions)
			why = "--object and --functions are for user mode; use --probe with --kernel";
		else if (!has_cmd && !a->duration)
			why = "--kernel needs a command or --duration";
		else if (a->o.pin && a->o.sample == ENGINE_SAMPLE_KPROBES)
			why = "--pin is for --sample breakpoints (with kprobes, --overhead-budget 100 "
			      "keeps every site armed)";
	} else if (a->nr_probes || a->duration || a->o.pin) {
		why = "--probe, --duration and --pin need --kernel";
	} else if (!has_cmd) {
		why = "no program given";
	}
	if (why)
		fprintf(stderr, "kcsanctl: run: %s\n", why);
	return why ? -1 : 0;
}

static int parse_args(int argc, char **argv, struct run_args *a)
{
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+vh", run_longopts, NULL)) != -1)
		if (parse_opt(a, opt, optarg))
			return -1;
	if (check_mode(a, optind < argc) || kbp_registers(a))
		return -1;
	/* The mode's defaults (params.c), then what the command line gave, in order. */
	param_values__init(&a->o.params, param__mode(a->o.kernel));
	for (int i = 0; i < a->nr_params; i++)
		engine_opts__set(&a->o, a->params[i].p, a->params[i].v);
	return 0;
}

/* Fork CMD held behind a pipe: it execs only once gate[1] is written. */
static pid_t spawn_gated(const char *path, char **argv, int *gate_w)
{
	int gate[2];
	pid_t pid;

	if (pipe2(gate, O_CLOEXEC)) {
		perror("kcsanctl: run: pipe");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		perror("kcsanctl: run: fork");
		close(gate[0]);
		close(gate[1]);
		return -1;
	}
	if (pid == 0) {
		char c;

		close(gate[1]);
		if (read(gate[0], &c, 1) != 1)
			_exit(127);
		execvp(path, argv);
		fprintf(stderr, "kcsanctl: run: cannot execute %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	close(gate[0]);
	*gate_w = gate[1];
	return pid;
}

/*
 * Does the next byte written to fd start a line?  The program shares
 * kcsanctl's stdout and stderr, and its output need not end in a newline.
 * A regular file tells by its last byte; a pipe or a terminal cannot tell,
 * so there the answer is no, and the summary may follow an empty line.
 */
static bool at_line_start(int fd)
{
	char name[64], last = 0;
	struct stat st;
	int rd;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return false;
	if (!st.st_size)
		return true;
	/* fd is open for writing only: read through a descriptor of our own. */
	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	rd = open(name, O_RDONLY | O_CLOEXEC);
	if (rd < 0)
		return false;
	if (pread(rd, &last, 1, st.st_size - 1) != 1)
		last = 0;
	close(rd);
	return last == '\n';
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --kmsg: the engine hands each report here, to print as it would and to copy to the kernel log. */
struct run_sink {
	FILE *out;
	bool json;
	struct kmsg_sink *kmsg;
};

static void run_on_report(void *ctx, const struct report_view *v)
{
	struct run_sink *rs = ctx;
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (rs->json)
		report__print_json(v, rs->out);
	else
		report__print_text(v, rs->out);
	fflush(rs->out);
	m = open_memstream(&text, &len);
	if (!m)
		return;
	report__print_text(v, m);
	if (!fclose(m))
		kmsg_sink__write(rs->kmsg, text, now_s() * 1000);
	free(text);
}

static void run_kmsg_summary(const struct run_sink *rs)
{
	struct kmsg_stats st;

	kmsg_sink__stats(rs->kmsg, &st);
	fprintf(stderr, "kcsanctl: run: kmsg: %llu reports written, %llu dropped by the rate "
			"limit, %llu lines refused\n", (unsigned long long)st.reports,
		(unsigned long long)st.dropped, (unsigned long long)st.lines_lost);
}

/* One run: the engine, the program (or workload) it watches, and what is left to end. */
struct run {
	struct run_args a;
	struct engine *e;
	char *prog;		/* PROG or CMD; NULL: kernel mode for --duration */
	char **argv;		/* PROG's argv */
	FILE *out;		/* --output */
	pid_t child;
	int gate;		/* the write end that lets the child exec */
	int status;		/* the child's wait status */
	bool child_done, halted;
	bool timed_out;		/* --duration ended the command */
	struct run_sink rs;	/* --kmsg */
};

/* PROG resolved and --output opened: 0, or -1 with the reason on stderr. */
static int run_prepare(struct run *r, char *prog)
{
	struct run_args *a = &r->a;

	if (prog) {
		r->prog = a->o.kernel ? strdup(prog) : resolve_prog(prog);
		if (!r->prog) {
			fprintf(stderr, "kcsanctl: run: cannot find %s: %s\n", prog, strerror(errno));
			return -1;
		}
	}
	if (a->output) {
		r->out = strcmp(a->output, "-") ? fopen(a->output, "w") : stdout;
		if (!r->out) {
			fprintf(stderr, "kcsanctl: run: cannot open %s: %s\n", a->output,
				strerror(errno));
			return -1;
		}
		a->o.out = r->out;
	}
	if (a->kmsg) {
		if (kmsg_sink__open(&r->rs.kmsg))
			return -1;
		r->rs.out = r->out ? r->out : stderr;
		r->rs.json = a->o.json;
		a->o.sink = run_on_report;
		a->o.hook_ctx = &r->rs;
	}
	return 0;
}

/*
 * -v's site listing, written 64 KiB at a time: stderr is unbuffered, and a
 * kernel set of 150,000 sites wrote 170 lines a second to a TCG guest's 9p
 * share, 15 minutes before the run started.
 */
static void print_sites(const struct engine *e)
{
	static char buf[1 << 16];
	int fd = dup(STDERR_FILENO);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f) {
		if (fd >= 0)
			close(fd);
		engine__print_sites(e, stderr);
		return;
	}
	setvbuf(f, buf, _IOFBF, sizeof(buf));
	engine__print_sites(e, f);
	fclose(f);
}

/* Decode what is to be probed, list it with -v, then load and attach. */
static int run_attach(struct run *r)
{
	struct run_args *a = &r->a;

	a->o.watch = a->nr_watches > 0;
	if (engine__open(&a->o, &r->e))
		return -1;
	for (int i = 0; i < a->nr_watches; i++)
		if (engine__check_watch(r->e, a->watches[i]))
			return -1;
	if (a->o.kernel) {
		if (a->nr_probes && engine__add_kernel(r->e, a->probes, a->nr_probes) < 0)
			return -1;
	} else {
		if (engine__add_object(r->e, r->prog, NULL) < 0)
			return -1;
		for (int i = 0; i < a->nr_objects; i++)
			if (engine__add_object(r->e, a->objects[i], NULL) < 0)
				return -1;
	}
	if (a->o.verbose)
		print_sites(r->e);
	/* Kernel mode may watch variables only (DataCollider): no probe at all. */
	if (!engine__nr_sites(r->e) && (!a->o.kernel || a->nr_probes)) {
		fprintf(stderr, "kcsanctl: run: no memory-access instruction to probe in %s%s%s\n",
			a->o.kernel ? "the probed kernel functions" : r->prog,
			a->o.functions ? " matching " : "", a->o.functions ? a->o.functions : "");
		return -1;
	}
	if (engine__start(r->e))
		return -1;
	/* The kernel's variables are there already: watch them before the workload starts. */
	for (int i = 0; a->o.kernel && i < a->nr_watches; i++)
		if (engine__watch(r->e, -1, NULL, a->watches[i]) < 0)
			return -1;
	return 0;
}

static void kill_child(struct run *r)
{
	kill(r->child, SIGKILL);
	waitpid(r->child, NULL, 0);
	r->child_done = true;
}

/* Fork the program, trace it, let it exec, then watch its variables. */
static int run_start_child(struct run *r)
{
	struct run_args *a = &r->a;

	if (r->prog) {
		r->child = spawn_gated(r->prog, r->argv, &r->gate);
		if (r->child < 0)
			return -1;
		r->child_done = false;
		if (!a->o.kernel && engine__add_pid(r->e, r->child)) {
			kill_child(r);
			return -1;
		}
	}
	if (a->o.verbose)
		fprintf(stderr, "kcsanctl: run: %zu sites attached%s%s\n", engine__nr_sites(r->e),
			r->prog ? ", starting " : "", r->prog ? r->prog : "");
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	if (r->gate >= 0) {
		if (write(r->gate, "g", 1) != 1) {
			perror("kcsanctl: run: cannot start the child");
			kill(r->child, SIGKILL);
		}
		close(r->gate);
		r->gate = -1;
	}
	engine__settle(r->e);
	if (!a->o.kernel && a->nr_watches &&
	    watch_after_exec(r->e, r->child, r->prog, a->watches, a->nr_watches)) {
		kill_child(r);
		return -1;
	}
	return 0;
}

/*
 * --duration is up with CMD still running: SIGTERM it, and SIGKILL it 5 s
 * later if it has not ended.
 */
static void end_child(struct run *r, double deadline)
{
	static bool killed;

	if (!r->timed_out)
		kill(r->child, SIGTERM);
	else if (!killed && now_s() >= deadline + 5) {
		kill(r->child, SIGKILL);
		killed = true;
	}
	r->timed_out = true;
}

/* Report until the program ends (or, kernel mode without one, the duration does). */
/*
 * The summary: the few numbers a user reads (reports, by which detector,
 * sites, overhead); every counter with -v, and in the --stats file; with
 * --json, every counter as one JSON object, as the reports are.
 */
static void print_summary(const struct run *r)
{
	FILE *f;

	if (r->a.o.json)
		engine__print_summary_json(r->e, stderr);
	else if (r->a.o.verbose)
		engine__print_summary(r->e, stderr);
	else
		engine__print_brief(r->e, stderr);
	if (!r->a.stats)
		return;
	f = fopen(r->a.stats, "we");
	if (!f) {
		fprintf(stderr, "kcsanctl: run: cannot write %s: %s\n", r->a.stats, strerror(errno));
		return;
	}
	engine__print_summary(r->e, f);
	if (fclose(f))
		fprintf(stderr, "kcsanctl: run: cannot write %s: %s\n", r->a.stats, strerror(errno));
}

static void run_loop(struct run *r)
{
	double deadline = r->a.duration ? now_s() + r->a.duration : 0;

	for (;;) {
		engine__poll(r->e, 100);
		if (r->a.halt && engine__nr_reports(r->e) && !r->halted && !r->child_done) {
			/* TSan's halt_on_error: the first report ends the run. */
			kill(r->child, SIGKILL);
			r->halted = true;
		}
		if (got_signal) {
			if (r->child_done)
				break;
			/* Forward; the child decides how to end. */
			kill(r->child, got_signal);
			got_signal = 0;
		}
		if (!r->child_done) {
			pid_t w = waitpid(r->child, &r->status, WNOHANG);

			if (w == r->child)
				r->child_done = true;
			else if (w < 0 && errno != EINTR) {
				perror("kcsanctl: run: waitpid");
				break;
			}
		}
		/* The command or the duration, whichever ends first, ends the run. */
		if (r->child_done && (r->prog || now_s() >= deadline))
			break;
		if (!r->child_done && deadline && now_s() >= deadline)
			end_child(r, deadline);
	}
	/* Reports of the last moments are still in the ring buffer, or held for a pair. */
	engine__flush(r->e);
	/* A line of its own, so that grep '^kcsand:' finds it. */
	fflush(stderr);
	if (!at_line_start(STDERR_FILENO))
		fputc('\n', stderr);
	print_summary(r);
	if (r->rs.kmsg)
		run_kmsg_summary(&r->rs);
}

/* PROG's exit status, or 66 when a race was reported and PROG exited 0 (or was halted). */
static int run_status(const struct run *r)
{
	int ret = 0;

	/* Ended by --duration: the command's status is kcsanctl's signal, not its own. */
	if (r->timed_out)
		ret = 0;
	else if (r->prog && WIFEXITED(r->status))
		ret = WEXITSTATUS(r->status);
	else if (r->prog && WIFSIGNALED(r->status))
		ret = 128 + WTERMSIG(r->status);
	if ((ret == 0 || r->halted) && engine__nr_reports(r->e))
		ret = EXIT_RACE;
	return ret;
}

static void run_close(struct run *r)
{
	double t0 = now_s();
	size_t n = r->e ? engine__nr_sites(r->e) : 0;

	if (r->gate >= 0)
		close(r->gate);
	engine__close(r->e);
	if (r->e && r->a.o.verbose)
		fprintf(stderr, "kcsanctl: run: detached %zu sites in %.1f ms\n", n,
			(now_s() - t0) * 1000);
	if (r->out && r->out != stdout)
		fclose(r->out);
	kmsg_sink__free(r->rs.kmsg);
	free(r->prog);
}

int cmd_run(int argc, char **argv)
{
	struct run r = { .child = -1, .gate = -1, .child_done = true };
	int ret = EXIT_USAGE;

	engine_opts__init(&r.a.o, PARAM_MODE_USER);	/* the mode's defaults come with --kernel */
	r.a.o.json = json_output;	/* kcsanctl -j run: the same as run --json */
	/* The program starts under kcsand: every sync it does is seen (kernel mode: ignored). */
	r.a.o.history = true;
	/*
	 * Every object is added before the start: the site table and the
	 * sampler's per-CPU statistics are sized to its sites, not to the
	 * service's 65,536 for objects added later (4 MiB made and freed by
	 * every run, whatever its size).
	 */
	r.a.o.max_sites = 0;
	if (parse_args(argc, argv, &r.a)) {
		run_help(stderr);
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "kcsanctl: run: needs root (BPF programs and %s need CAP_BPF, "
				"CAP_PERFMON and CAP_SYS_ADMIN)\n",
			r.a.o.kernel ? "kprobes" : "uprobes");
		return EXIT_USAGE;
	}
	r.argv = &argv[optind];
	if (run_prepare(&r, optind < argc ? argv[optind] : NULL)) {
		free(r.prog);
		return EXIT_USAGE;
	}
	if (!run_attach(&r) && !run_start_child(&r)) {
		run_loop(&r);
		ret = run_status(&r);
	}
	run_close(&r);
	return ret;
}

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
#include <sys/wait.h>
#include "engine/engine.h"
#include "kcsanctl.h"
#include "report/report.h"
#include "service/kmsg.h"

#define MAX_OBJECTS	16
#define MAX_PROBES	64

void run_help(FILE *out)
{
	fprintf(out,
		"Usage: kcsanctl run [OPTIONS] -- PROG [ARGS...]\n"
		"       kcsanctl run --kernel --probe SPEC... | --watch SYM|ADDR[:LEN]... [OPTIONS]\n"
		"                    [--duration S] [-- CMD...]\n"
		"\n"
		"Run PROG with a uprobe on every memory-access instruction of its functions and\n"
		"report data races in KCSAN's format on stderr.  Exit status: PROG's, or 66 when\n"
		"a race was reported and PROG exited 0.\n"
		"\n"
		"With --kernel, put a kprobe on every memory access of the kernel functions that\n"
		"SPEC names (GLOB, module:NAME, src:PATH with --kernel-debug, FUNC+0xOFF or\n"
		"!GLOB), or sample them with execute breakpoints (--sample), and a hardware\n"
		"watchpoint on every CPU for each --watch (a kallsyms variable or a kernel\n"
		"address), run CMD (or wait S seconds), and detach.  Exit status: 66 when a race\n"
		"was reported, else CMD's.\n"
		"\n"
		"Options:\n"
		"  --skip-watch N        plain accesses per CPU between watchpoints (default %u;\n"
		"                        kernel mode %u)\n"
		"  --udelay-task US      stall of a watcher, in µs (default %u; kernel mode %u)\n"
		"  --functions GLOB,...  probe only the functions matching these globs\n"
		"  --overhead-budget PCT arm a random subset of the sites, readjusted from their\n"
		"                        hit rates, so that probes add at most PCT%% to PROG's\n"
		"                        own time after %u CPU-ms of warm-up (default %u; 100: all);\n"
		"                        kernel mode: to the machine's busy time, after %u CPU-ms\n"
		"                        of it, and the traps of disarmed kprobes are a floor\n"
		"                        outside the budget\n"
		"  --object PATH         also probe this shared object (repeatable)\n"
		"  --watch SYM|ADDR[:LEN] watch this variable of PROG (with --kernel: of the kernel\n"
		"                        or a module) with a hardware watchpoint and report every\n"
		"                        conflicting pair of accesses to it, probed or not\n"
		"                        (repeatable, up to 4 debug registers)\n"
		"  --param NAME=VALUE    set any parameter (repeatable; --param help lists them)\n"
		"  --json                one JSON object per report instead of KCSAN's text\n"
		"  --output FILE         write reports to FILE ('-': stdout) instead of stderr\n"
		"  --kmsg                also write each report to the kernel log (/dev/kmsg),\n"
		"                        line by line in KCSAN's layout (at most %u per %u s)\n"
		"  --halt-on-error       stop PROG at the first report (exit status 66)\n"
		"  --marks FILE          mark accesses by hand: lines 'FUNC|FUNC+0xOFF|FILE:LINE\n"
		"                        marked|data_race' (docs/marking.md)\n"
		"  --source-dir DIR      look for sources here first (marking by READ_ONCE & co.)\n"
		"  --no-marking          mark only lock-prefixed and xchg accesses (no DWARF,\n"
		"                        source or marks file): to measure what marking removes\n"
		"  --per-site-links      one uprobe link per site, as on kernels without\n"
		"                        uprobe_multi (< 6.6); slow to detach\n"
		"  --kernel              kernel mode (kprobes)\n"
		"  --probe SPEC          kernel functions to probe (repeatable, with --kernel)\n"
		"  --duration S          kernel mode: watch for S seconds; with CMD, end CMD\n"
		"                        (SIGTERM) when S seconds are up\n"
		"  --sample MODE         kernel mode: kprobes (a kprobe on every site) or\n"
		"                        breakpoints (execute breakpoints in the debug registers\n"
		"                        sample the sites a few at a time, no kprobe); default:\n"
		"                        kprobes (breakpoints are not yet proven past %u sites)\n"
		"  --sample-period US    breakpoints: how long each set of sites stays sampled\n"
		"                        (default %u µs)\n"
		"  --kernel-debug PATH   a vmlinux or NAME.ko with DWARF: marking and file:line\n"
		"                        in kernel frames (Debian: /usr/lib/debug/boot/vmlinux-RELEASE)\n"
		"  -v, --verbose         what is decoded and attached, every site, plain or\n"
		"                        marked and why (twice: what marked it; libbpf debug)\n",
		USER_DEFAULT_SKIP_WATCH, KERNEL_DEFAULT_SKIP_WATCH, USER_DEFAULT_UDELAY_TASK,
		KERNEL_DEFAULT_UDELAY_TASK, DEFAULT_SAMPLER_WARMUP_CPU_MS, DEFAULT_OVERHEAD_BUDGET,
		KERNEL_DEFAULT_SAMPLER_WARMUP_CPU_MS, KMSG_BURST, KMSG_INTERVAL_MS / 1000,
		KBP_AUTO_MIN_SITES, KBP_DEFAULT_PERIOD_US);
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
		report_print_json(v, rs->out);
	else
		report_print_text(v, rs->out);
	fflush(rs->out);
	m = open_memstream(&text, &len);
	if (!m)
		return;
	report_print_text(v, m);
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
	bool skip_set, udelay_set, warmup_set;
	bool halt;
	bool kmsg;
	double duration;
	const char *output;
};

static int parse_args(int argc, char **argv, struct run_args *a)
{
	enum {
		OPT_SKIP = 256, OPT_UDELAY, OPT_FUNCS, OPT_OBJECT, OPT_PARAM, OPT_JSON, OPT_HALT,
		OPT_PER_SITE, OPT_KERNEL, OPT_PROBE, OPT_DURATION, OPT_OUTPUT, OPT_MARKS,
		OPT_SOURCE_DIR, OPT_KERNEL_DEBUG, OPT_BUDGET, OPT_WATCH, OPT_NO_MARKING, OPT_KMSG,
		OPT_SAMPLE, OPT_SAMPLE_PERIOD,
	};
	static const struct option longopts[] = {
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
		{ "kmsg", no_argument, NULL, OPT_KMSG },
		{ "sample", required_argument, NULL, OPT_SAMPLE },
		{ "sample-period", required_argument, NULL, OPT_SAMPLE_PERIOD },
		{ "marks", required_argument, NULL, OPT_MARKS },
		{ "source-dir", required_argument, NULL, OPT_SOURCE_DIR },
		{ "kernel-debug", required_argument, NULL, OPT_KERNEL_DEBUG },
		{ "overhead-budget", required_argument, NULL, OPT_BUDGET },
		{ "watch", required_argument, NULL, OPT_WATCH },
		{ "no-marking", no_argument, NULL, OPT_NO_MARKING },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	char *end;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+vh", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_SKIP:
			if (engine_opts__set(&a->o, "skip_watch", optarg))
				return -1;
			a->skip_set = true;
			break;
		case OPT_UDELAY:
			if (engine_opts__set(&a->o, "udelay_task", optarg))
				return -1;
			a->udelay_set = true;
			break;
		case OPT_FUNCS:
			a->o.functions = optarg;
			break;
		case OPT_OBJECT:
			if (a->nr_objects == MAX_OBJECTS) {
				fprintf(stderr, "kcsanctl: run: at most %d --object\n", MAX_OBJECTS);
				return -1;
			}
			a->objects[a->nr_objects++] = optarg;
			break;
		case OPT_PROBE:
			if (a->nr_probes == MAX_PROBES) {
				fprintf(stderr, "kcsanctl: run: at most %d --probe\n", MAX_PROBES);
				return -1;
			}
			a->probes[a->nr_probes++] = optarg;
			break;
		case OPT_PARAM:
			if (!strcmp(optarg, "help")) {
				params_print(stdout);
				exit(0);
			}
			if (engine_opts__set_kv(&a->o, optarg)) {
				params_print(stderr);
				return -1;
			}
			if (!strncmp(optarg, "skip_watch=", 11))
				a->skip_set = true;
			if (!strncmp(optarg, "udelay_task=", 12))
				a->udelay_set = true;
			if (!strncmp(optarg, "sampler_warmup_cpu_ms=", 22))
				a->warmup_set = true;
			break;
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
		case OPT_DURATION:
			errno = 0;
			a->duration = strtod(optarg, &end);
			if (errno || *end || a->duration <= 0 || a->duration > 86400) {
				fprintf(stderr, "kcsanctl: run: --duration: bad number of seconds '%s'\n",
					optarg);
				return -1;
			}
			break;
		case OPT_OUTPUT:
			a->output = optarg;
			break;
		case OPT_KMSG:
			a->kmsg = true;
			break;
		case OPT_SAMPLE_PERIOD:
			errno = 0;
			a->o.kbp_period_us = strtoul(optarg, &end, 10);
			if (errno || *end || a->o.kbp_period_us < 100 ||
			    a->o.kbp_period_us > 10000000) {
				fprintf(stderr, "kcsanctl: run: --sample-period: bad value '%s' "
						"(expected 100..10000000 µs)\n", optarg);
				return -1;
			}
			break;
		case OPT_SAMPLE:
			if (!strcmp(optarg, "kprobes"))
				a->o.sample = ENGINE_SAMPLE_KPROBES;
			else if (!strcmp(optarg, "breakpoints"))
				a->o.sample = ENGINE_SAMPLE_BREAKPOINTS;
			else {
				fprintf(stderr, "kcsanctl: run: --sample: '%s' is neither kprobes nor "
						"breakpoints\n", optarg);
				return -1;
			}
			break;
		case OPT_MARKS:
			a->o.marks_file = optarg;
			break;
		case OPT_SOURCE_DIR:
			a->o.source_dir = optarg;
			break;
		case OPT_BUDGET:
			if (engine_opts__set(&a->o, "overhead_budget", optarg))
				return -1;
			break;
		case OPT_WATCH:
			if (a->nr_watches == KCSAND_HW_SLOTS) {
				fprintf(stderr, "kcsanctl: run: at most %d --watch (debug registers)\n",
					KCSAND_HW_SLOTS);
				return -1;
			}
			a->watches[a->nr_watches++] = optarg;
			break;
		case OPT_NO_MARKING:
			a->o.no_marking = true;
			break;
		case OPT_KERNEL_DEBUG:
			if (a->nr_kernel_debug == MAX_OBJECTS) {
				fprintf(stderr, "kcsanctl: run: at most %d --kernel-debug\n",
					MAX_OBJECTS);
				return -1;
			}
			if (access(optarg, R_OK)) {
				fprintf(stderr, "kcsanctl: run: --kernel-debug %s: %s\n", optarg,
					strerror(errno));
				return -1;
			}
			a->kernel_debug[a->nr_kernel_debug++] = optarg;
			a->o.kernel_debug = a->kernel_debug;
			a->o.nr_kernel_debug = a->nr_kernel_debug;
			break;
		case 'v':
			a->o.verbose++;
			break;
		case 'h':
			run_help(stdout);
			exit(0);
		default:
			return -1;
		}
	}
	if (a->o.kernel) {
		if (!a->nr_probes && !a->nr_watches) {
			fprintf(stderr, "kcsanctl: run: --kernel needs at least one --probe SPEC or "
					"--watch SYMBOL|ADDRESS\n");
			return -1;
		}
		if (a->nr_objects || a->o.functions) {
			fprintf(stderr, "kcsanctl: run: --object and --functions are for user mode; "
					"use --probe with --kernel\n");
			return -1;
		}
		if (optind >= argc && !a->duration) {
			fprintf(stderr, "kcsanctl: run: --kernel needs a command or --duration\n");
			return -1;
		}
		/* Debug registers: --watch first, one for escalation, sampling the rest. */
		a->o.kbp_regs = a->nr_watches < KCSAND_HW_SLOTS - 1 ?
				KCSAND_HW_SLOTS - 1 - a->nr_watches : 0;
		if (a->o.sample == ENGINE_SAMPLE_BREAKPOINTS && !a->o.kbp_regs) {
			fprintf(stderr, "kcsanctl: run: --sample breakpoints needs a debug register: "
					"at most %d --watch with it\n", KCSAND_HW_SLOTS - 2);
			return -1;
		}
		if (!a->o.kbp_regs)
			a->o.sample = ENGINE_SAMPLE_KPROBES;
		if (!a->skip_set)
			a->o.params.skip_watch = KERNEL_DEFAULT_SKIP_WATCH;
		if (!a->udelay_set)
			a->o.params.udelay_task = KERNEL_DEFAULT_UDELAY_TASK;
		/* The machine's busy CPU time, not a target's (daemon/sampler/ksampler.c). */
		if (!a->warmup_set)
			a->o.sampler_warmup_cpu_ms = KERNEL_DEFAULT_SAMPLER_WARMUP_CPU_MS;
		/* Every task that enters the probed code: the kernel has no "target". */
		a->o.params.trace_all = 1;
	} else {
		if (a->nr_probes || a->duration) {
			fprintf(stderr, "kcsanctl: run: --probe and --duration need --kernel\n");
			return -1;
		}
		if (optind >= argc) {
			fprintf(stderr, "kcsanctl: run: no program given\n");
			return -1;
		}
	}
	return 0;
}

/*
 * --duration is up with CMD still running: SIGTERM it, and SIGKILL it 5 s
 * later if it has not ended.  Returns true (the run timed out).
 */
static bool end_child(pid_t child, bool already, double deadline)
{
	static bool killed;

	if (!already)
		kill(child, SIGTERM);
	else if (!killed && now_s() >= deadline + 5) {
		kill(child, SIGKILL);
		killed = true;
	}
	return true;
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

int cmd_run(int argc, char **argv)
{
	struct run_args a = {};
	struct run_sink rs = {};
	struct engine *e = NULL;
	int status = 0, ret = EXIT_USAGE, gate = -1;
	bool halted = false, child_done = true, timed_out = false;
	char *prog = NULL;
	FILE *out = NULL;
	pid_t child = -1;
	double deadline = 0;

	engine_opts__init(&a.o);
	a.o.json = json_output;	/* kcsanctl -j run: the same as run --json */
	if (parse_args(argc, argv, &a)) {
		run_help(stderr);
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "kcsanctl: run: needs root (BPF programs and %s need CAP_BPF, "
				"CAP_PERFMON and CAP_SYS_ADMIN)\n",
			a.o.kernel ? "kprobes" : "uprobes");
		return EXIT_USAGE;
	}
	if (optind < argc) {
		prog = a.o.kernel ? strdup(argv[optind]) : resolve_prog(argv[optind]);
		if (!prog) {
			fprintf(stderr, "kcsanctl: run: cannot find %s: %s\n", argv[optind],
				strerror(errno));
			return EXIT_USAGE;
		}
	}
	if (a.output) {
		out = strcmp(a.output, "-") ? fopen(a.output, "w") : stdout;
		if (!out) {
			fprintf(stderr, "kcsanctl: run: cannot open %s: %s\n", a.output,
				strerror(errno));
			goto out;
		}
		a.o.out = out;
	}
	if (a.kmsg) {
		if (kmsg_sink__open(&rs.kmsg))
			goto out;
		rs.out = out ? out : stderr;
		rs.json = a.o.json;
		a.o.sink = run_on_report;
		a.o.hook_ctx = &rs;
	}

	if (engine__new(&a.o, &e))
		goto out;
	if (a.o.kernel) {
		if (a.nr_probes && engine__add_kernel(e, a.probes, a.nr_probes) < 0)
			goto out;
	} else {
		if (engine__add_object(e, prog, NULL) < 0)
			goto out;
		for (int i = 0; i < a.nr_objects; i++)
			if (engine__add_object(e, a.objects[i], NULL) < 0)
				goto out;
	}
	if (a.o.verbose)
		engine__print_sites(e, stderr);
	/* Kernel mode may watch variables only (DataCollider): no probe at all. */
	if (!engine__nr_sites(e) && (!a.o.kernel || a.nr_probes)) {
		fprintf(stderr, "kcsanctl: run: no memory-access instruction to probe in %s%s%s\n",
			a.o.kernel ? "the probed kernel functions" : prog,
			a.o.functions ? " matching " : "", a.o.functions ? a.o.functions : "");
		goto out;
	}
	if (engine__load(e) || engine__attach(e))
		goto out;
	/* The kernel's variables are there already: watch them before the workload starts. */
	for (int i = 0; a.o.kernel && i < a.nr_watches; i++)
		if (engine__watch(e, -1, NULL, a.watches[i]) < 0)
			goto out;

	if (prog) {
		child = spawn_gated(prog, &argv[optind], &gate);
		if (child < 0)
			goto out;
		if (!a.o.kernel && engine__add_pid(e, child)) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			goto out;
		}
		child_done = false;
	}
	if (a.o.verbose)
		fprintf(stderr, "kcsanctl: run: %zu sites attached%s%s\n", engine__nr_sites(e),
			prog ? ", starting " : "", prog ? prog : "");
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	if (gate >= 0) {
		if (write(gate, "g", 1) != 1) {
			perror("kcsanctl: run: cannot start the child");
			kill(child, SIGKILL);
		}
		close(gate);
		gate = -1;
	}
	if (!a.o.kernel && a.nr_watches &&
	    watch_after_exec(e, child, prog, a.watches, a.nr_watches)) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		goto out;
	}
	if (a.duration)
		deadline = now_s() + a.duration;

	for (;;) {
		engine__poll(e, 100);
		if (a.halt && engine__nr_reports(e) && !halted && !child_done) {
			/* TSan's halt_on_error: the first report ends the run. */
			kill(child, SIGKILL);
			halted = true;
		}
		if (got_signal) {
			if (child_done)
				break;
			/* Forward; the child decides how to end. */
			kill(child, got_signal);
			got_signal = 0;
		}
		if (!child_done) {
			pid_t w = waitpid(child, &status, WNOHANG);

			if (w == child)
				child_done = true;
			else if (w < 0 && errno != EINTR) {
				perror("kcsanctl: run: waitpid");
				break;
			}
		}
		/* Kernel mode: the command or the duration, whichever ends first, ends the run. */
		if (child_done && (prog || now_s() >= deadline))
			break;
		if (!child_done && deadline && now_s() >= deadline)
			timed_out = end_child(child, timed_out, deadline);
	}
	/* Reports of the last moments are still in the ring buffer, or held for a pair. */
	engine__flush(e);
	engine__print_summary(e, stderr);
	if (rs.kmsg)
		run_kmsg_summary(&rs);

	ret = 0;
	/* Ended by --duration: the command's status is kcsanctl's signal, not its own. */
	if (prog && !timed_out) {
		if (WIFEXITED(status))
			ret = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			ret = 128 + WTERMSIG(status);
	}
	if ((ret == 0 || halted) && engine__nr_reports(e))
		ret = EXIT_RACE;
out:
	if (gate >= 0)
		close(gate);
	if (e && a.o.verbose) {
		size_t n = engine__nr_sites(e);
		double t0 = now_s();

		engine__free(e);
		fprintf(stderr, "kcsanctl: run: detached %zu sites in %.1f ms\n", n,
			(now_s() - t0) * 1000);
	} else {
		engine__free(e);
	}
	if (out && out != stdout)
		fclose(out);
	kmsg_sink__free(rs.kmsg);
	free(prog);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsanctl's commands that steer a running kcsand through its control
 * socket: each builds one request line (daemon/service/protocol.h), sends it and
 * prints the reply's body; "error: REASON" becomes a message and exit 1.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "kcsanctl.h"
#include "sites/kernel_spec.h"
#include "service/protocol.h"
#include "hw/watch_spec.h"
#include "report/report.h"
#include "util/json.h"

static int connect_daemon(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(socket_path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "kcsanctl: %s: socket path too long\n", socket_path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		if (err == -ENOENT || err == -ECONNREFUSED)
			fprintf(stderr, "kcsanctl: no kcsand running on %s\n", socket_path);
		else
			fprintf(stderr, "kcsanctl: cannot connect to kcsand on %s: %s\n",
				socket_path, strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

static void print_error(const char *reason)
{
	if (json_output) {
		struct json_object *o = json_object_new_object();

		json__add(o, "error", json__string(reason));
		json__print(stdout, o);
		putchar('\n');
	} else {
		fprintf(stderr, "kcsanctl: %s\n", reason);
	}
}

/* Send line on fd: 0, or 1 with the reason (the daemon's, if it gave one) on stderr. */
static int send_line(int fd, const char *line)
{
	char buf[65536];
	ssize_t n;
	int err;

	snprintf(buf, sizeof(buf), "%s%s\n", json_output ? "-j " : "", line);
	if (send(fd, buf, strlen(buf), MSG_NOSIGNAL) == (ssize_t)strlen(buf))
		return 0;
	err = errno;
	/* Turned away at connect (permission, too many clients): the reason waits. */
	n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	buf[n > 0 ? n : 0] = '\0';
	if (!strncmp(buf, "error: ", 7)) {
		buf[strcspn(buf, "\n")] = '\0';
		print_error(buf + 7);
	} else {
		fprintf(stderr, "kcsanctl: cannot send to kcsand: %s\n", strerror(err));
	}
	return 1;
}

/* Print the reply's body up to "ok" (0) or "error: ..." (1); with follow, on to the end. */
static int read_reply(FILE *f, bool follow)
{
	char *acc = NULL;
	size_t len = 0;
	int ret = 1;
	bool body = false, answered = false;

	for (;;) {
		ssize_t n = getline(&acc, &len, f);

		if (n < 0)
			break;
		if (!strcmp(acc, "ok\n")) {
			if (json_output && !body)
				printf("null\n");
			fflush(stdout);
			ret = 0;
			answered = true;
			if (!follow)
				break;
			continue;
		}
		if (!strncmp(acc, "error: ", 7)) {
			acc[n - 1] = '\0';
			print_error(acc + 7);
			ret = 1;
			answered = true;
			break;
		}
		fputs(acc, stdout);
		if (follow)
			fflush(stdout);
		body = true;
	}
	if (!answered)
		fprintf(stderr, "kcsanctl: kcsand closed the connection without a reply\n");
	free(acc);
	return ret;
}

/*
 * Send line, print the reply's body up to "ok" or "error: ...".  With
 * follow, go on printing what the daemon streams until it closes.
 */
static int request(const char *line, bool follow)
{
	int fd, ret;
	FILE *f;

	fd = connect_daemon();
	if (fd < 0)
		return EXIT_NO_DAEMON;
	if (strlen(line) > CTL_MAX_LINE) {
		print_error("request too long");
		close(fd);
		return EXIT_USAGE;
	}
	if (send_line(fd, line)) {
		close(fd);
		return 1;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return 1;
	}
	ret = read_reply(f, follow);
	fclose(f);
	return ret;
}

/* Join words into one request line. */
static int join(char *out, size_t len, const char *head, int argc, char **argv)
{
	size_t n = snprintf(out, len, "%s", head);

	for (int i = 0; i < argc && n < len; i++)
		n += snprintf(out + n, len - n, " %s", argv[i]);
	if (n >= len) {
		fprintf(stderr, "kcsanctl: request longer than %d bytes\n", CTL_MAX_LINE);
		return -E2BIG;
	}
	return 0;
}

/* ------------------------------------------------------------ simple commands */

static void status_help(FILE *out)
{
	fprintf(out, "Usage: kcsanctl [-j] status\n\nThe daemon's version, uptime, "
		     "configuration, filter mode, probes and report count.\n");
}

static void stats_help(FILE *out)
{
	fprintf(out, "Usage: kcsanctl [-j] stats\n\n"
		     "What /sys/kernel/debug/kcsan shows (enabled, KCSAN's nine counters, the\n"
		     "filter list), then kcsand's own figures: records dropped, sites attached,\n"
		     "reports suppressed by dedup and by the filter list.\n");
}

static void onoff_help(FILE *out)
{
	fprintf(out, "Usage: kcsanctl on | off\n\nSwitch race detection on or off, as "
		     "writing on/off to /sys/kernel/debug/kcsan.\n");
}

static void mode_help(FILE *out)
{
	fprintf(out, "Usage: kcsanctl whitelist | blacklist\n\n"
		     "blacklist (the default): reports naming a listed function are dropped.\n"
		     "whitelist: only reports naming a listed function are kept.\n");
}

static int no_args(int argc, void (*help)(FILE *out))
{
	if (argc != 1) {
		help(stderr);
		return -1;
	}
	return 0;
}

static int do_status(int argc, char **argv)
{
	return no_args(argc, status_help) ? EXIT_USAGE : request("status", false);
}

static int do_stats(int argc, char **argv)
{
	return no_args(argc, stats_help) ? EXIT_USAGE : request("stats", false);
}

static int do_on(int argc, char **argv)
{
	return no_args(argc, onoff_help) ? EXIT_USAGE : request("on", false);
}

static int do_off(int argc, char **argv)
{
	return no_args(argc, onoff_help) ? EXIT_USAGE : request("off", false);
}

static int do_whitelist(int argc, char **argv)
{
	return no_args(argc, mode_help) ? EXIT_USAGE : request("whitelist", false);
}

static int do_blacklist(int argc, char **argv)
{
	return no_args(argc, mode_help) ? EXIT_USAGE : request("blacklist", false);
}

/* ------------------------------------------------------------ parameters */

static void set_help(FILE *out)
{
	fprintf(out, "Usage: kcsanctl set PARAM VALUE\n\n"
		     "Change a parameter while kcsand runs (no reload); out-of-range values are\n"
		     "refused with the range.  kcsanctl get lists them.\n");
}

static void get_help(FILE *out)
{
	fprintf(out, "Usage: kcsanctl [-j] get [PARAM]\n\nPrint one parameter, or all.\n");
}

static int do_set(int argc, char **argv)
{
	char line[CTL_MAX_LINE + 1];

	if (argc != 3) {
		set_help(stderr);
		return EXIT_USAGE;
	}
	return join(line, sizeof(line), "set", 2, argv + 1) ? EXIT_USAGE : request(line, false);
}

static int do_get(int argc, char **argv)
{
	char line[CTL_MAX_LINE + 1];

	if (argc > 2) {
		get_help(stderr);
		return EXIT_USAGE;
	}
	return join(line, sizeof(line), "get", argc - 1, argv + 1) ? EXIT_USAGE :
									request(line, false);
}

/* ------------------------------------------------------------ filter */

static void filter_help(FILE *out)
{
	fprintf(out, "Usage: kcsanctl filter add FUNC...\n"
		     "       kcsanctl filter remove FUNC...\n"
		     "       kcsanctl [-j] filter list\n\n"
		     "KCSAN's filter list: a report matches when either of its two top functions\n"
		     "is listed.  In blacklist mode (default) matching reports are dropped and\n"
		     "the listed functions set no watchpoints; in whitelist mode only they are\n"
		     "kept (kcsanctl whitelist).\n");
}

static int filter_change(int argc, char **argv, const char *head)
{
	char line[CTL_MAX_LINE + 1];

	if (argc < 2) {
		filter_help(stderr);
		return EXIT_USAGE;
	}
	return join(line, sizeof(line), head, argc - 1, argv + 1) ? EXIT_USAGE :
									request(line, false);
}

static int do_filter_add(int argc, char **argv)
{
	return filter_change(argc, argv, "filter add");
}

static int do_filter_remove(int argc, char **argv)
{
	return filter_change(argc, argv, "filter remove");
}

static int do_filter_list(int argc, char **argv)
{
	return no_args(argc, filter_help) ? EXIT_USAGE : request("filter list", false);
}

static const struct cmd filter_cmds[] = {
	{ "add", do_filter_add, filter_help },
	{ "remove", do_filter_remove, filter_help },
	{ "list", do_filter_list, filter_help },
	{},
};

static int do_filter(int argc, char **argv)
{
	return cmd_dispatch(filter_cmds, argc - 1, argv + 1, filter_help);
}

/* ------------------------------------------------------------ probes */

static void probe_help(FILE *out)
{
	fprintf(out, "Usage: kcsanctl probe add user BINARY [--functions GLOB[,GLOB...]] "
		     "[--pid PID]\n"
		     "       kcsanctl probe add kernel SPEC...\n"
		     "       kcsanctl probe remove ID\n"
		     "       kcsanctl [-j] probe list\n\n"
		     "Probe the functions of BINARY (all of them, or those matching the globs) in\n"
		     "process PID and its children, or, without --pid, in every process running\n"
		     "BINARY.  With kernel, put a kprobe on every memory access of the kernel\n"
		     "functions that the SPECs choose: GLOB, module:NAME, FUNC+0xOFF, and !GLOB to\n"
		     "leave functions out (the kernel needs kprobes).  probe list shows the IDs\n"
		     "that probe remove takes.\n");
}

static int do_probe_add(int argc, char **argv)
{
	char line[CTL_MAX_LINE + 1], why[160], *path;
	struct user_target_args a;
	int n, ret;

	if (argc < 3 || (strcmp(argv[1], "user") && strcmp(argv[1], "kernel"))) {
		probe_help(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "kernel")) {
		for (int i = 2; i < argc; i++) {
			const char *bad = kernel_spec__invalid(argv[i]);

			if (bad) {
				fprintf(stderr, "kcsanctl: probe add kernel: bad spec '%s': %s\n",
					argv[i], bad);
				return EXIT_USAGE;
			}
		}
		return join(line, sizeof(line), "probe add kernel", argc - 2, argv + 2) ?
			       EXIT_USAGE : request(line, false);
	}
	if (user_target_args__parse((const char *const *)argv + 2, argc - 2, false, &a, why,
				    sizeof(why))) {
		fprintf(stderr, "kcsanctl: probe add user: %s\n", why);
		probe_help(stderr);
		return EXIT_USAGE;
	}
	/* The daemon runs in /: send the absolute path of what the user named. */
	path = realpath(argv[2], NULL);
	if (!path) {
		fprintf(stderr, "kcsanctl: probe add: %s: %s\n", argv[2], strerror(errno));
		return EXIT_USAGE;
	}
	n = snprintf(line, sizeof(line), "probe add user %s", path);
	free(path);
	if (n < 0 || (size_t)n >= sizeof(line) ||
	    join(line + n, sizeof(line) - n, "", argc - 3, argv + 3))
		return EXIT_USAGE;
	ret = request(line, false);
	return ret;
}

static int do_probe_remove(int argc, char **argv)
{
	char line[64];

	if (argc != 2 || strspn(argv[1], "0123456789") != strlen(argv[1]) || strlen(argv[1]) > 9) {
		probe_help(stderr);
		return EXIT_USAGE;
	}
	snprintf(line, sizeof(line), "probe remove %s", argv[1]);
	return request(line, false);
}

static int do_probe_list(int argc, char **argv)
{
	return no_args(argc, probe_help) ? EXIT_USAGE : request("probe list", false);
}

static const struct cmd probe_cmds[] = {
	{ "add", do_probe_add, probe_help },
	{ "remove", do_probe_remove, probe_help },
	{ "list", do_probe_list, probe_help },
	{},
};

static int do_probe(int argc, char **argv)
{
	return cmd_dispatch(probe_cmds, argc - 1, argv + 1, probe_help);
}

/* ------------------------------------------------------------ watches */

static void watch_help(FILE *out)
{
	fprintf(out, "Usage: kcsanctl watch [add] SYMBOL|ADDRESS[:LEN] [--pid PID | --kernel] "
		     "[--duration S]\n"
		     "       kcsanctl watch remove ID\n"
		     "       kcsanctl [-j] watch list\n\n"
		     "Watch a variable with a hardware watchpoint (DataCollider style) and report\n"
		     "every conflicting pair of accesses to it, from probed code or not.  SYMBOL is\n"
		     "a variable of the process's executable or of a probed object it maps, LEN 1,\n"
		     "2, 4 or 8 bytes (default: the variable's size, at most 8).  --pid: the\n"
		     "process (default: the one running process that runs a probed user target).\n"
		     "--kernel: a kernel or module variable (kallsyms) on every CPU; kcsand loads\n"
		     "its kernel engine, without kprobes, if no kernel target has.  --duration:\n"
		     "remove the watch after S seconds (default: until removed, the process exits\n"
		     "or kcsand stops).  There are four debug registers: a watch that finds all\n"
		     "of them watching is refused.  watch list shows the IDs that watch remove takes.\n");
}

static int do_watch_add(int argc, char **argv)
{
	char line[CTL_MAX_LINE + 1], why[160];
	struct watch_args a;

	if (argc < 2) {
		watch_help(stderr);
		return EXIT_USAGE;
	}
	if (watch_args__parse((const char *const *)argv + 1, argc - 1, true, &a, why,
			      sizeof(why))) {
		fprintf(stderr, "kcsanctl: watch add: %s\n", why);
		return EXIT_USAGE;
	}
	return join(line, sizeof(line), "watch add", argc - 1, argv + 1) ? EXIT_USAGE :
									      request(line, false);
}

static int do_watch_remove(int argc, char **argv)
{
	char line[64];

	if (argc != 2 || strspn(argv[1], "0123456789") != strlen(argv[1]) || !argv[1][0] ||
	    strlen(argv[1]) > 9) {
		watch_help(stderr);
		return EXIT_USAGE;
	}
	snprintf(line, sizeof(line), "watch remove %s", argv[1]);
	return request(line, false);
}

static int do_watch_list(int argc, char **argv)
{
	return no_args(argc, watch_help) ? EXIT_USAGE : request("watch list", false);
}

/*
 * Subcommands by their full name only: `kcsanctl watch SPEC` is short for
 * `watch add SPEC`, and a variable may well be called "l" or "rem".
 */
static int do_watch(int argc, char **argv)
{
	if (argc < 2) {
		watch_help(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "add"))
		return do_watch_add(argc - 1, argv + 1);
	if (!strcmp(argv[1], "remove"))
		return do_watch_remove(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return do_watch_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		watch_help(stdout);
		return 0;
	}
	return do_watch_add(argc, argv);
}

/* ------------------------------------------------------------ reports */

static void reports_help(FILE *out)
{
	fprintf(out, "Usage: kcsanctl [-j] reports [-f]\n\n"
		     "Print the last reports kcsand kept (up to 32); -f: then follow new ones\n"
		     "as they come, until interrupted.  -j: one JSON object per line.\n");
}

static int do_reports(int argc, char **argv)
{
	bool follow = argc == 2 && (!strcmp(argv[1], "-f") || !strcmp(argv[1], "--follow"));

	if (argc > 2 || (argc == 2 && !follow)) {
		reports_help(stderr);
		return EXIT_USAGE;
	}
	return request(follow ? "reports follow" : "reports", follow);
}

/* In `kcsanctl help`'s order. */
const struct cmd remote_cmds[] = {
	{ "status", do_status, status_help,
	  "  status                          version, uptime, probes, filter mode\n" },
	{ "stats", do_stats, stats_help,
	  "  stats                           KCSAN's debugfs statistics, then kcsand's\n" },
	{ "on", do_on, onoff_help,
	  "  on | off                        switch race detection on or off\n" },
	{ "off", do_off, onoff_help },
	{ "filter", do_filter, filter_help,
	  "  filter add|remove FUNC...       edit KCSAN's filter list\n"
	  "  filter list                     show it\n" },
	{ "whitelist", do_whitelist, mode_help,
	  "  blacklist | whitelist           drop the listed functions' reports, or keep\n"
	  "                                  only theirs\n" },
	{ "blacklist", do_blacklist, mode_help },
	{ "set", do_set, set_help,
	  "  set PARAM VALUE | get [PARAM]   live parameters (skip_watch, udelay_task...)\n" },
	{ "get", do_get, get_help },
	{ "probe", do_probe, probe_help,
	  "  probe add user BINARY [--functions GLOB] [--pid PID]\n"
	  "  probe remove ID | probe list    probed targets\n" },
	{ "watch", do_watch, watch_help,
	  "  watch [add] SYMBOL|ADDRESS[:LEN] [--pid PID | --kernel] [--duration S]\n"
	  "  watch remove ID | watch list    hardware watchpoints on variables\n" },
	{ "reports", do_reports, reports_help,
	  "  reports [-f]                    the last reports; -f: follow new ones\n" },
	{},
};

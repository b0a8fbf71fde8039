// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcsand: the service.  Loads the engine, attaches the targets of its
 * configuration, writes reports to its sinks and serves the control
 * socket until SIGTERM or SIGINT, then detaches everything.  SIGHUP
 * re-reads the configuration.
 *
 * One thread, one poll loop: a signalfd, the ring buffer's epoll fd, the
 * listening socket and its clients.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "service/config.h"
#include "service/control.h"
#include "kcsand.h"
#include "engine/params.h"
#include "service/service.h"

#define EXIT_USAGE 2

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: kcsand [-c FILE] [--socket PATH] [--foreground] [--log FILE] [--json]\n"
		"              [-v]\n"
		"\n"
		"Run kcsand as a service: attach the targets of the configuration, report data\n"
		"races in KCSAN's format to the configured sinks, and take commands from\n"
		"kcsanctl on the control socket, until SIGTERM or SIGINT.  SIGHUP re-reads the\n"
		"configuration.  See kcsand(8) and docs/kcsand.conf.\n"
		"\n"
		"  -c, --config FILE   configuration (default %s)\n"
		"  -s, --socket PATH   control socket (default %s)\n"
		"  -f, --foreground    stay in the foreground; reports go to stderr\n"
		"  -l, --log FILE      also append reports to FILE\n"
		"  -j, --json          reports as JSON lines instead of KCSAN's text\n"
		"  -v, --verbose       more messages (twice: libbpf's debug output)\n"
		"  -V, --version       print the version\n"
		"  --check             parse the configuration, print problems, and exit\n"
		"  --param help        list the parameters the configuration can set\n",
		CONFIG_DEFAULT_PATH, CTL_DEFAULT_SOCKET);
}

/* systemd's readiness protocol, without libsystemd: one datagram to $NOTIFY_SOCKET. */
static void sd_notify_send(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';	/* abstract namespace */
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	close(fd);
}

/*
 * Without --foreground: fork, and let the parent exit only once the child
 * is ready (0) or has failed (1), so that the caller sees the outcome.
 */
static int daemonize(int *ready_fd)
{
	int p[2], fd;
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 ? 0 : 1);
	}
	close(p[0]);
	setsid();
	if (chdir("/"))
		return -errno;
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		/* stderr stays until ready, for startup errors. */
		if (fd > STDERR_FILENO)
			close(fd);
	}
	*ready_fd = p[1];
	return 0;
}

static void detach_stderr(void)
{
	int fd = open("/dev/null", O_WRONLY);

	if (fd >= 0) {
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
}

/* What the command line asked for. */
struct main_args {
	struct service_opts so;
	bool explicit_config, check_only;
};

enum { OPT_CHECK = 256, OPT_PARAM };

static const struct option main_longopts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "socket", required_argument, NULL, 's' },
	{ "foreground", no_argument, NULL, 'f' },
	{ "log", required_argument, NULL, 'l' },
	{ "json", no_argument, NULL, 'j' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "param", required_argument, NULL, OPT_PARAM },
	{ "help", no_argument, NULL, 'h' },
	{},
};

/* --param: only help; the service reads its parameters from the file and `kcsanctl set`. */
static int param_option(const char *arg)
{
	if (strcmp(arg, "help")) {
		fprintf(stderr, "kcsand: --param %s: only '--param help' is an option; set "
				"parameters in %s (NAME VALUE lines) or with 'kcsanctl set NAME VALUE'\n",
			arg, CONFIG_DEFAULT_PATH);
		return EXIT_USAGE;
	}
	param__print_all(stdout);
	return 0;
}

/* -1: go on; else the exit status (help, version, bad usage). */
static int parse_options(int argc, char **argv, struct main_args *m)
{
	struct service_opts *so = &m->so;
	int opt;

	while ((opt = getopt_long(argc, argv, "c:s:fl:jvVh", main_longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			so->config_path = optarg;
			m->explicit_config = true;
			break;
		case 's':
			so->socket = optarg;
			break;
		case 'f':
			so->foreground = true;
			break;
		case 'l':
			so->log = optarg;
			break;
		case 'j':
			so->json = true;
			break;
		case 'v':
			so->verbose++;
			break;
		case 'V':
			printf("kcsand %s\n", KCSAND_VERSION);
			return 0;
		case OPT_CHECK:
			m->check_only = true;
			break;
		case OPT_PARAM:
			return param_option(optarg);
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kcsand: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((so->socket && so->socket[0] != '/') || (so->log && so->log[0] != '/')) {
		/* The daemon changes to / : relative paths would move under it. */
		fprintf(stderr, "kcsand: --socket and --log need absolute paths\n");
		return EXIT_USAGE;
	}
	return -1;
}

/* -1: go on with cfg loaded; else the exit status (--check, a bad file, not root). */
static int read_config(const struct main_args *m, struct config *cfg)
{
	const char *path = m->so.config_path;
	char msg[1024];

	config__init(cfg);
	if (!m->explicit_config && access(path, F_OK)) {
		fprintf(stderr, "kcsand: %s does not exist: starting with no target (add them "
				"with kcsanctl probe add)\n", path);
	} else if (config__load(path, cfg, msg, sizeof(msg))) {
		fprintf(stderr, "kcsand: %s\n", msg);
		return EXIT_USAGE;
	}
	if (m->check_only) {
		printf("kcsand: %s: ok, %zu targets, %zu filtered functions\n", path,
		       cfg->nr_targets, cfg->filter.n);
		return 0;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "kcsand: needs root to load BPF programs and place uprobes and kprobes\n");
		return EXIT_USAGE;
	}
	return -1;
}

/* Signals arrive through a signalfd, in the loop, never in a handler. */
static int signal_fd(void)
{
	sigset_t mask;
	int fd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		perror("kcsand: signalfd");
	return fd;
}

/* SIGHUP: re-read the configuration; a bad one keeps the running one. */
static void reload(struct service *svc, bool foreground)
{
	char msg[1024];

	sd_notify_send("RELOADING=1");
	if (service__reload(svc, msg, sizeof(msg))) {
		if (foreground)
			fprintf(stderr, "kcsand: reload: %s; keeping the running configuration\n",
				msg);
		else
			syslog(LOG_ERR, "reload: %s; keeping the running configuration", msg);
	}
	sd_notify_send("READY=1");
}

/* The poll loop, until SIGTERM or SIGINT (or poll fails). */
static void serve(struct service *svc, struct ctl_server *ctl, int sfd, bool foreground)
{
	struct pollfd fds[2 + 1 + CTL_MAX_CLIENTS];

	for (;;) {
		struct signalfd_siginfo si;
		int n = 0, nctl;

		fds[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = service__epoll_fd(svc), .events = POLLIN };
		nctl = ctl_server__pollfds(ctl, fds + n, CTL_MAX_CLIENTS + 1);
		/* At least once a second, and when the site sampler is due. */
		if (poll(fds, n + nctl, service__timeout_ms(svc)) < 0 && errno != EINTR) {
			perror("kcsand: poll");
			return;
		}
		ctl_server__dispatch(ctl, fds + n, nctl);
		/* Also on a timeout: a report queued by a late poll is not left waiting. */
		service__poll(svc);
		if (!(fds[0].revents & POLLIN) || read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGHUP) {
			reload(svc, foreground);
			continue;
		}
		if (foreground)
			fprintf(stderr, "kcsand: %s: detaching\n", strsignal(si.ssi_signo));
		sd_notify_send("STOPPING=1");
		return;
	}
}

/* Tell the waiting parent (without --foreground) and systemd that the service is up. */
static int say_ready(struct service *svc, int *ready_fd)
{
	fprintf(stderr, "kcsand: ready: control socket %s\n", service__socket_path(svc));
	if (*ready_fd >= 0) {
		if (write(*ready_fd, "r", 1) != 1)
			return -1;
		close(*ready_fd);
		*ready_fd = -1;
		detach_stderr();
	}
	sd_notify_send("READY=1\nSTATUS=attached, serving the control socket");
	return 0;
}

int main(int argc, char **argv)
{
	struct main_args m = { .so = { .config_path = CONFIG_DEFAULT_PATH } };
	struct ctl_server *ctl = NULL;
	struct service *svc = NULL;
	int ret, sfd = -1, ready_fd = -1;
	struct config cfg;

	ret = parse_options(argc, argv, &m);
	if (ret >= 0)
		return ret;
	ret = read_config(&m, &cfg);
	if (ret >= 0) {
		config__free(&cfg);
		return ret;
	}
	ret = 1;
	if (!m.so.foreground) {
		int err;

		openlog("kcsand", LOG_PID, LOG_DAEMON);
		err = daemonize(&ready_fd);
		if (err) {
			fprintf(stderr, "kcsand: cannot daemonize: %s\n", strerror(-err));
			config__free(&cfg);
			return 1;
		}
	}
	sfd = signal_fd();
	if (sfd < 0 || service__new(&m.so, &cfg, &svc) ||
	    ctl_server__open(service__socket_path(svc), service__socket_group(svc),
			     service__exec, svc, &ctl))
		goto out;
	service__set_server(svc, ctl);
	if (say_ready(svc, &ready_fd))
		goto out;
	serve(svc, ctl, sfd, m.so.foreground);
	service__poll(svc);
	service__at_exit(svc);
	ret = 0;
out:
	ctl_server__free(ctl);
	service__free(svc);
	config__free(&cfg);
	if (sfd >= 0)
		close(sfd);
	return ret;
}

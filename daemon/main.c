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

int main(int argc, char **argv)
{
	enum { OPT_CHECK = 256, OPT_PARAM };
	static const struct option longopts[] = {
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
	struct service_opts so = { .config_path = CONFIG_DEFAULT_PATH };
	struct pollfd fds[2 + 1 + CTL_MAX_CLIENTS];
	struct ctl_server *ctl = NULL;
	struct service *svc = NULL;
	struct config cfg;
	bool explicit_config = false, check_only = false;
	int opt, ret = 1, sfd = -1, ready_fd = -1, err;
	char msg[1024];
	sigset_t mask;

	while ((opt = getopt_long(argc, argv, "c:s:fl:jvVh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			so.config_path = optarg;
			explicit_config = true;
			break;
		case 's':
			so.socket = optarg;
			break;
		case 'f':
			so.foreground = true;
			break;
		case 'l':
			so.log = optarg;
			break;
		case 'j':
			so.json = true;
			break;
		case 'v':
			so.verbose++;
			break;
		case 'V':
			printf("kcsand %s\n", KCSAND_VERSION);
			return 0;
		case OPT_CHECK:
			check_only = true;
			break;
		case OPT_PARAM:
			/* The service reads its parameters from the file and `kcsanctl set`. */
			if (strcmp(optarg, "help")) {
				fprintf(stderr, "kcsand: --param %s: only '--param help' is an option; "
						"set parameters in %s (NAME VALUE lines) or with "
						"'kcsanctl set NAME VALUE'\n", optarg,
					CONFIG_DEFAULT_PATH);
				return EXIT_USAGE;
			}
			params_print(stdout);
			return 0;
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
	if ((so.socket && so.socket[0] != '/') || (so.log && so.log[0] != '/')) {
		/* The daemon changes to / : relative paths would move under it. */
		fprintf(stderr, "kcsand: --socket and --log need absolute paths\n");
		return EXIT_USAGE;
	}

	config_init(&cfg);
	if (!explicit_config && access(so.config_path, F_OK)) {
		fprintf(stderr, "kcsand: %s does not exist: starting with no target (add them "
				"with kcsanctl probe add)\n", so.config_path);
	} else if (config_load(so.config_path, &cfg, msg, sizeof(msg))) {
		fprintf(stderr, "kcsand: %s\n", msg);
		config_free(&cfg);
		return EXIT_USAGE;
	}
	if (check_only) {
		printf("kcsand: %s: ok, %zu targets, %zu filtered functions\n", so.config_path,
		       cfg.nr_targets, cfg.filter.n);
		config_free(&cfg);
		return 0;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "kcsand: needs root to load BPF programs and place uprobes and kprobes\n");
		config_free(&cfg);
		return EXIT_USAGE;
	}
	if (!so.foreground) {
		openlog("kcsand", LOG_PID, LOG_DAEMON);
		err = daemonize(&ready_fd);
		if (err) {
			fprintf(stderr, "kcsand: cannot daemonize: %s\n", strerror(-err));
			config_free(&cfg);
			return 1;
		}
	}

	/* Signals arrive through the signalfd, in the loop, never in a handler. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		perror("kcsand: signalfd");
		goto out;
	}

	if (service__new(&so, &cfg, &svc))
		goto out;
	if (ctl_server__open(service__socket_path(svc), service__socket_group(svc),
			     service__exec, svc, &ctl))
		goto out;
	service__set_server(svc, ctl);

	fprintf(stderr, "kcsand: ready: control socket %s\n", service__socket_path(svc));
	if (ready_fd >= 0) {
		if (write(ready_fd, "r", 1) != 1)
			goto out;
		close(ready_fd);
		ready_fd = -1;
		detach_stderr();
	}
	sd_notify_send("READY=1\nSTATUS=attached, serving the control socket");

	for (;;) {
		struct signalfd_siginfo si;
		int n = 0, nctl;

		fds[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = service__epoll_fd(svc), .events = POLLIN };
		nctl = ctl_server__pollfds(ctl, fds + n, CTL_MAX_CLIENTS + 1);
		/* At least once a second, and when the site sampler is due. */
		if (poll(fds, n + nctl, service__timeout_ms(svc)) < 0 && errno != EINTR) {
			perror("kcsand: poll");
			break;
		}
		ctl_server__dispatch(ctl, fds + n, nctl);
		/* Also on a timeout: a report queued by a late poll is not left waiting. */
		service__poll(svc);
		if (!(fds[0].revents & POLLIN) || read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGHUP) {
			sd_notify_send("RELOADING=1");
			if (service__reload(svc, msg, sizeof(msg))) {
				if (so.foreground)
					fprintf(stderr, "kcsand: reload: %s; keeping the running "
							"configuration\n", msg);
				else
					syslog(LOG_ERR, "reload: %s; keeping the running "
					       "configuration", msg);
			}
			sd_notify_send("READY=1");
			continue;
		}
		if (so.foreground)
			fprintf(stderr, "kcsand: %s: detaching\n", strsignal(si.ssi_signo));
		sd_notify_send("STOPPING=1");
		break;
	}
	service__poll(svc);
	service__at_exit(svc);
	ret = 0;
out:
	ctl_server__free(ctl);
	service__free(svc);
	config_free(&cfg);
	if (sfd >= 0)
		close(sfd);
	return ret;
}

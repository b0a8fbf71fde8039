/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kcsand as a service: the running configuration, the probes (targets of
 * the configuration and those added through the socket), the live filter
 * list, the sinks (service.c), and the execution of control requests
 * (request.c).  main.c owns the poll loop and the signals; control.c the
 * socket.
 */
#ifndef KCSAND_SERVICE_H
#define KCSAND_SERVICE_H

#include <stdbool.h>
#include <stdio.h>
#include "config.h"
#include "protocol.h"

struct service_opts {
	const char *config_path;
	const char *socket;	/* from the command line, or NULL */
	const char *log;	/* from the command line, or NULL */
	bool json;
	bool foreground;
	int verbose;
};

struct service;
struct ctl_server;

/*
 * Load the engine with c's parameters and attach c's targets; on success
 * the service owns c.  -errno, with a message on stderr.
 */
int service__new(const struct service_opts *o, struct config *c, struct service **out);
/* Where reports are streamed to socket clients; set once the socket is open. */
void service__set_server(struct service *s, struct ctl_server *ctl);
/* The socket path and group to use: the command line's, else the configuration's. */
const char *service__socket_path(const struct service *s);
const char *service__socket_group(const struct service *s);
/* The ring buffer's fd to poll; service__poll() consumes it. */
int service__epoll_fd(const struct service *s);
void service__poll(struct service *s);
/* How long the main loop may wait before service__poll() has work (the site sampler's next tick). */
int service__timeout_ms(const struct service *s);
/*
 * SIGHUP: re-read the configuration and re-attach only the targets that
 * changed.  A bad configuration leaves the running one untouched: -errno
 * with the reason in err.
 */
int service__reload(struct service *s, char *err, size_t errlen);
/* ctl_exec_fn for control.c. */
int service__exec(void *ctx, const struct ctl_request *r, FILE *out, char *err, size_t errlen);
/* At exit: the counters' summary in the foreground, a warning if reports were lost. */
void service__at_exit(struct service *s);
/* Detach everything and free. */
void service__free(struct service *s);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control socket: a Unix stream socket (mode 0600, or 0660 for a
 * configured group), peers checked with SO_PEERCRED and SO_PEERGROUPS:
 * root may do everything, a member of the group only read (status, stats,
 * reports, get, the lists).  One request per line (protocol.h), replies
 * ending in "ok" or "error: REASON".
 *
 * Everything runs in the daemon's single poll loop: the server hands out
 * its pollfds and is called back with what poll() found.  Requests and
 * replies are bounded (CTL_MAX_LINE in, CTL_MAX_OUT queued out); a client
 * that overflows either, or that follows the report stream and does not
 * keep up, is dropped, so no client can make the daemon block or grow.
 */
#ifndef KCSAND_CONTROL_H
#define KCSAND_CONTROL_H

#include <poll.h>
#include <stdio.h>
#include "protocol.h"

#define CTL_MAX_CLIENTS	16
#define CTL_ROOT_CLIENTS 2		/* of those, kept for root */
#define CTL_IDLE_S	60		/* a client silent this long is dropped, unless following */
#define CTL_MAX_OUT	(4 << 20)	/* bytes queued for one client */
#define CTL_DEFAULT_SOCKET "/run/kcsand.sock"

/* What executing a request asks of the server besides sending its reply. */
enum ctl_exec_result {
	CTL_EXEC_OK = 0,
	CTL_EXEC_FOLLOW = 1,	/* ok, and stream reports to this client from now on */
};

/*
 * Run r, writing the reply's body to out.  Returns an enum ctl_exec_result,
 * or a negative errno with the reason in err.
 */
typedef int (*ctl_exec_fn)(void *ctx, const struct ctl_request *r, FILE *out, char *err,
			   size_t errlen);

struct ctl_server;

/* Listen on path; group (NULL: none) may connect besides root.  -errno with a message. */
int ctl_server__open(const char *path, const char *group, ctl_exec_fn exec, void *ctx,
		     struct ctl_server **out);
/* Fill fds (at most max) with what to poll; returns how many. */
int ctl_server__pollfds(struct ctl_server *s, struct pollfd *fds, int max);
/* Handle the revents of the fds that ctl_server__pollfds() filled. */
void ctl_server__dispatch(struct ctl_server *s, const struct pollfd *fds, int n);
/* Queue a report for every client following the stream (text or JSON, as each asked). */
void ctl_server__broadcast(struct ctl_server *s, const char *text, const char *json);
/* Close every client and the socket, and remove the socket file. */
void ctl_server__free(struct ctl_server *s);

#endif

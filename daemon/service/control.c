// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "control.h"
#include "util/array.h"
#include "util/print.h"

/*
 * A connected client.  in holds a partial request; discarding is set
 * after an oversized one, until its newline.  out is what is queued to
 * send; the client is dropped when it would exceed CTL_MAX_OUT.
 */
struct client {
	int fd;
	char in[CTL_MAX_LINE + 2];
	size_t in_len;
	bool discarding;
	char *out;
	size_t out_len, out_cap;
	bool follow, follow_json;
	bool dead;
	bool root;		/* else a socket_group member: read-only requests */
	time_t last;		/* CLOCK_MONOTONIC seconds of its last request byte */
};

struct ctl_server {
	int fd;
	char *path;
	gid_t gid;
	bool has_group;
	ctl_exec_fn exec;
	void *ctx;
	struct client *clients[CTL_MAX_CLIENTS];
	int nr_clients;
	int polled;		/* clients in the last pollfds, in order */
};

static int bind_socket(struct ctl_server *s, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		pr_warn("socket %s: path too long\n", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			pr_warn("socket %s: exists and is not a socket\n", path);
			close(fd);
			return -EEXIST;
		}
		/* A live daemon answers; a stale socket of a killed one is refused. */
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)) || errno == EAGAIN) {
			pr_warn("socket %s: another kcsand is running there\n",
				path);
			close(fd);
			return -EADDRINUSE;
		}
		close(fd);
		unlink(path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
	}
	/*
	 * Created 0600 (the socket inode's mode, less the umask): nobody but
	 * root can connect until the group is set, and only then is the group
	 * given access.
	 */
	old = umask(0177);
	err = fchmod(fd, 0600) || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old);
	if (!err && s->has_group && (chown(path, 0, s->gid) || chmod(path, 0660)))
		err = -errno;
	if (!err && listen(fd, CTL_MAX_CLIENTS))
		err = -errno;
	if (err) {
		pr_warn("cannot listen on %s: %s\n", path, strerror(-err));
		close(fd);
		return err;
	}
	s->fd = fd;
	return 0;
}

int ctl_server__open(const char *path, const char *group, ctl_exec_fn exec, void *ctx,
		     struct ctl_server **out)
{
	struct ctl_server *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->fd = -1;
	s->exec = exec;
	s->ctx = ctx;
	if (group) {
		struct group *gr = getgrnam(group);

		if (!gr) {
			pr_warn("socket_group %s: no such group\n", group);
			free(s);
			return -ENOENT;
		}
		s->gid = gr->gr_gid;
		s->has_group = true;
	}
	err = bind_socket(s, path);
	if (!err) {
		s->path = strdup(path);
		if (!s->path)
			err = -ENOMEM;
	}
	if (err) {
		ctl_server__free(s);
		return err;
	}
	*out = s;
	return 0;
}

enum peer_kind { PEER_DENIED, PEER_MEMBER, PEER_ROOT };

/*
 * Is gid among the groups the peer held when it connected?  Those the
 * kernel saw (SO_PEERGROUPS), not /etc/group: a process that dropped a
 * group has lost it, and one given a group has it.
 */
static bool peer_in_group(int fd, gid_t gid)
{
	socklen_t len = 0;
	gid_t *groups;
	bool in = false;

	if (!getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, NULL, &len) || errno != ERANGE)
		return false;	/* no supplementary group */
	groups = malloc(len);
	if (!groups)
		return false;
	if (!getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		for (size_t i = 0; i < len / sizeof(*groups) && !in; i++)
			in = groups[i] == gid;
	free(groups);
	return in;
}

/* Root, or a member of the configured group (read-only, see request_allowed()). */
static enum peer_kind peer_kind(const struct ctl_server *s, int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		return PEER_DENIED;
	if (cr.uid == 0)
		return PEER_ROOT;
	if (s->has_group && (cr.gid == s->gid || peer_in_group(fd, s->gid)))
		return PEER_MEMBER;
	return PEER_DENIED;
}

/*
 * What a socket_group member may do: read.  Everything that probes a
 * binary, traces a pid, adds kprobes or watches, or changes parameters,
 * the filter or the on/off switch (all machine-wide, or reaching into
 * other users' processes) is root's: each request's access in CTL_REQUESTS.
 */
#define CTL_READ_ONLY_READ	true
#define CTL_READ_ONLY_ROOT	false
#define CTL_READ_ONLY(OP, word, access, exec, help) [CTL_##OP] = CTL_READ_ONLY_##access,
static const bool read_only[CTL_NR_OPS] = {
	CTL_REQUESTS(CTL_READ_ONLY)
};
#undef CTL_READ_ONLY

static bool request_allowed(const struct client *c, enum ctl_op op)
{
	return c->root || ((unsigned int)op < CTL_NR_OPS && read_only[op]);
}

static time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void client_flush(struct client *c)
{
	while (c->out_len && !c->dead) {
		ssize_t w = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				c->dead = true;
			return;
		}
		memmove(c->out, c->out + w, c->out_len - w);
		c->out_len -= w;
	}
}

/* Queue len bytes; a client that lets CTL_MAX_OUT pile up is dropped. */
static void client_queue(struct client *c, const char *buf, size_t len)
{
	if (c->dead)
		return;
	if (c->out_len + len > CTL_MAX_OUT) {
		c->dead = true;
		return;
	}
	if (ARRAY_RESERVE_MORE(c->out, c->out_cap, c->out_len, len, 4096)) {
		c->dead = true;
		return;
	}
	memcpy(c->out + c->out_len, buf, len);
	c->out_len += len;
}

static void client_puts(struct client *c, const char *s)
{
	client_queue(c, s, strlen(s));
}

static void accept_clients(struct ctl_server *s)
{
	for (;;) {
		int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct client *c;

		enum peer_kind kind;

		if (fd < 0)
			return;
		kind = peer_kind(s, fd);
		if (kind == PEER_DENIED) {
			send(fd, "error: permission denied\n", 25, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		/* The last CTL_ROOT_CLIENTS places are root's: members cannot lock it out. */
		if (s->nr_clients == CTL_MAX_CLIENTS ||
		    (kind != PEER_ROOT && s->nr_clients >= CTL_MAX_CLIENTS - CTL_ROOT_CLIENTS)) {
			send(fd, "error: too many clients\n", 24, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->root = kind == PEER_ROOT;
		c->last = now_s();
		s->clients[s->nr_clients++] = c;
	}
}

static void run_request(struct ctl_server *s, struct client *c, const char *line, size_t len)
{
	static struct ctl_request req;	/* 4 KiB: keep it off the stack */
	char err[512], *body = NULL;
	size_t body_len = 0;
	FILE *out;
	int ret;

	ret = ctl_request__parse(line, len, &req, err, sizeof(err));
	if (ret) {
		client_puts(c, "error: ");
		client_puts(c, err);
		client_puts(c, "\n");
		return;
	}
	if (!request_allowed(c, req.op)) {
		client_puts(c, "error: permission denied: socket_group members may only read "
			       "(status, stats, reports, get, filter list, probe list, watch list)\n");
		return;
	}
	out = open_memstream(&body, &body_len);
	if (!out) {
		client_puts(c, "error: out of memory\n");
		return;
	}
	err[0] = '\0';
	ret = s->exec(s->ctx, &req, out, err, sizeof(err));
	fclose(out);
	if (ret < 0) {
		client_puts(c, "error: ");
		client_puts(c, err[0] ? err : strerror(-ret));
		client_puts(c, "\n");
	} else {
		client_queue(c, body, body_len);
		client_puts(c, "ok\n");
		if (ret == CTL_EXEC_FOLLOW) {
			c->follow = true;
			c->follow_json = req.json;
		}
	}
	free(body);
}

/* Reads of one client per dispatch: a client that never pauses cannot hold the loop. */
#define CTL_READS_PER_ROUND 16

static void client_read(struct ctl_server *s, struct client *c)
{
	for (int round = 0; round < CTL_READS_PER_ROUND; round++) {
		size_t start = 0;
		ssize_t r = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0 || errno != EAGAIN)
				c->dead = true;
			return;
		}
		c->in_len += r;
		c->last = now_s();
		for (size_t i = 0; i < c->in_len && !c->dead; i++) {
			if (c->in[i] != '\n')
				continue;
			if (!c->discarding)
				run_request(s, c, c->in + start, i - start);
			c->discarding = false;
			start = i + 1;
		}
		memmove(c->in, c->in + start, c->in_len - start);
		c->in_len -= start;
		if (c->in_len == sizeof(c->in)) {
			/* No newline within the limit: refuse it once, skip to its end. */
			if (!c->discarding) {
				char msg[64];

				snprintf(msg, sizeof(msg), "error: request longer than %d bytes\n",
					 CTL_MAX_LINE);
				client_puts(c, msg);
			}
			c->discarding = true;
			c->in_len = 0;
		}
		client_flush(c);
		if (c->dead)
			return;
	}
}

static void client_free(struct client *c)
{
	close(c->fd);
	free(c->out);
	free(c);
}

/*
 * Drop dead clients, keeping the others in order; and idle ones: a client
 * that sent nothing for CTL_IDLE_S seconds and follows no stream only
 * holds a place.
 */
static void reap(struct ctl_server *s)
{
	time_t now = now_s();
	int j = 0;

	for (int i = 0; i < s->nr_clients; i++) {
		struct client *c = s->clients[i];

		if (!c->follow && !c->out_len && now - c->last >= CTL_IDLE_S)
			c->dead = true;
		if (c->dead)
			client_free(s->clients[i]);
		else
			s->clients[j++] = s->clients[i];
	}
	s->nr_clients = j;
}

int ctl_server__pollfds(struct ctl_server *s, struct pollfd *fds, int max)
{
	int n = 0;

	if (max < 1)
		return 0;
	fds[n++] = (struct pollfd){ .fd = s->fd, .events = POLLIN };
	for (int i = 0; i < s->nr_clients && n < max; i++) {
		struct client *c = s->clients[i];

		fds[n++] = (struct pollfd){
			.fd = c->fd,
			.events = POLLIN | (c->out_len ? POLLOUT : 0),
		};
	}
	s->polled = n - 1;
	return n;
}

void ctl_server__dispatch(struct ctl_server *s, const struct pollfd *fds, int n)
{
	int polled = s->polled;

	if (n < 1)
		return;
	for (int i = 0; i < polled && i + 1 < n; i++) {
		struct client *c = s->clients[i];
		short re = fds[i + 1].revents;

		if (re & POLLOUT)
			client_flush(c);
		if (re & (POLLIN | POLLHUP | POLLERR))
			client_read(s, c);
	}
	reap(s);
	if (fds[0].revents & POLLIN)
		accept_clients(s);
}

void ctl_server__broadcast(struct ctl_server *s, const char *text, const char *json)
{
	for (int i = 0; i < s->nr_clients; i++) {
		struct client *c = s->clients[i];

		if (!c->follow)
			continue;
		client_puts(c, c->follow_json ? json : text);
		client_flush(c);
	}
	/* Dead clients are reaped in dispatch: the pollfds order must hold until then. */
}

void ctl_server__free(struct ctl_server *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nr_clients; i++)
		client_free(s->clients[i]);
	if (s->fd >= 0)
		close(s->fd);
	if (s->path)
		unlink(s->path);
	free(s->path);
	free(s);
}

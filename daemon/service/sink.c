// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "kmsg.h"
#include "sink.h"
#include "util/print.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

struct sinks {
	struct sink_opts o;
	char *log_path;
	FILE *log;
	int journal_fd;		/* datagram socket to journald, or -1: plain syslog */
	bool syslog_open;
	struct kmsg_sink *kmsg;	/* or NULL */
};

static int open_log(struct sinks *s, const char *path)
{
	FILE *f;

	if (!path)
		return 0;
	f = fopen(path, "ae");
	if (!f) {
		int err = -errno;

		pr_warn("cannot open log %s: %s\n", path, strerror(-err));
		return err;
	}
	s->log = f;
	s->log_path = strdup(path);
	return s->log_path ? 0 : -ENOMEM;
}

static void close_log(struct sinks *s)
{
	if (s->log)
		fclose(s->log);
	s->log = NULL;
	free(s->log_path);
	s->log_path = NULL;
}

static void open_syslog(struct sinks *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	/* The tests stand in for journald here. */
	const char *path = getenv("KCSAND_JOURNAL_SOCKET");

	if (!path || !*path)
		path = JOURNAL_SOCKET;
	if (s->journal_fd < 0 && !access(path, W_OK)) {
		s->journal_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		if (s->journal_fd >= 0 &&
		    connect(s->journal_fd, (struct sockaddr *)&sa, sizeof(sa))) {
			close(s->journal_fd);
			s->journal_fd = -1;
		}
	}
	if (!s->syslog_open) {
		openlog("kcsand", LOG_PID | LOG_NDELAY, LOG_DAEMON);
		s->syslog_open = true;
	}
}

int sinks__open(const struct sink_opts *o, struct sinks **out)
{
	struct sinks *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->journal_fd = -1;
	s->o = *o;
	s->o.log = NULL;
	err = open_log(s, o->log);
	if (err) {
		sinks__free(s);
		return err;
	}
	if (o->to_syslog)
		open_syslog(s);
	if (o->to_kmsg) {
		err = kmsg_sink__open(&s->kmsg);
		if (err) {
			sinks__free(s);
			return err;
		}
	}
	*out = s;
	return 0;
}

int sinks__reconfigure(struct sinks *s, const struct sink_opts *o)
{
	struct sinks tmp = { .journal_fd = -1 };
	int err = open_log(&tmp, o->log);

	if (!err && o->to_kmsg && !s->kmsg)
		err = kmsg_sink__open(&tmp.kmsg);
	/* Keep the old sinks when a new one cannot be opened. */
	if (err) {
		close_log(&tmp);
		return err;
	}
	close_log(s);
	if (tmp.kmsg)
		s->kmsg = tmp.kmsg;
	if (!o->to_kmsg) {
		kmsg_sink__free(s->kmsg);
		s->kmsg = NULL;
	}
	s->log = tmp.log;
	s->log_path = tmp.log_path;
	s->o = *o;
	s->o.log = NULL;
	if (o->to_syslog)
		open_syslog(s);
	return 0;
}

void sinks__free(struct sinks *s)
{
	if (!s)
		return;
	close_log(s);
	if (s->journal_fd >= 0)
		close(s->journal_fd);
	if (s->syslog_open)
		closelog();
	kmsg_sink__free(s->kmsg);
	free(s);
}

/* Append a journal field; the binary form when the value has a newline. */
static void journal_field(FILE *m, const char *key, const char *val)
{
	if (!val)
		return;
	if (strchr(val, '\n')) {
		unsigned long long len = strlen(val);
		unsigned char le[8];

		for (int i = 0; i < 8; i++)
			le[i] = len >> (8 * i);
		fprintf(m, "%s\n", key);
		fwrite(le, 1, 8, m);
		fprintf(m, "%s\n", val);
	} else {
		fprintf(m, "%s=%s\n", key, val);
	}
}

static void emit_journal(struct sinks *s, const struct sink_fields *f, const char *text)
{
	char *buf = NULL, num[32];
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	bool sent = false;

	if (!m)
		return;
	journal_field(m, "MESSAGE", text);
	journal_field(m, "PRIORITY", "3");
	journal_field(m, "SYSLOG_IDENTIFIER", "kcsand");
	journal_field(m, "KCSAN_TITLE", f->title);
	journal_field(m, "KCSAN_FUNC1", f->func[0]);
	journal_field(m, "KCSAN_FUNC2", f->func[1]);
	journal_field(m, "KCSAN_ACCESS1", f->access[0]);
	journal_field(m, "KCSAN_ACCESS2", f->access[1]);
	snprintf(num, sizeof(num), "0x%016llx", f->addr);
	journal_field(m, "KCSAN_ADDR", num);
	for (int i = 0; i < 2; i++) {
		if (!f->pid[i])
			continue;
		snprintf(num, sizeof(num), "%u", f->pid[i]);
		journal_field(m, i ? "KCSAN_PID2" : "KCSAN_PID1", num);
		snprintf(num, sizeof(num), "%u", f->tid[i]);
		journal_field(m, i ? "KCSAN_TID2" : "KCSAN_TID1", num);
	}
	journal_field(m, "KCSAN_BINARY", f->binary);
	if (!fclose(m) && s->journal_fd >= 0)
		sent = send(s->journal_fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len;
	free(buf);
	if (!sent) {
		/* No journald (or a report too large for one datagram): classic syslog. */
		syslog(LOG_ERR, "BUG: KCSAN: %s [func1=%s func2=%s access1=%s access2=%s "
				"addr=0x%016llx pid1=%u pid2=%u binary=%s]",
		       f->title, f->func[0] ? f->func[0] : "-", f->func[1] ? f->func[1] : "-",
		       f->access[0] ? f->access[0] : "-", f->access[1] ? f->access[1] : "-",
		       f->addr, f->pid[0], f->pid[1], f->binary ? f->binary : "-");
	}
}

void sinks__emit(struct sinks *s, const struct sink_fields *f, const char *text, const char *json)
{
	const char *out = s->o.json ? json : text;

	if (s->o.to_stderr) {
		fputs(out, stderr);
		fflush(stderr);
	}
	if (s->log) {
		fputs(out, s->log);
		fflush(s->log);
	}
	if (s->o.to_syslog)
		emit_journal(s, f, text);
	if (s->kmsg) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		kmsg_sink__write(s->kmsg, text, ts.tv_sec * 1000ull + ts.tv_nsec / 1000000);
	}
}

bool sinks__kmsg_stats(const struct sinks *s, struct kmsg_stats *st)
{
	if (!s->kmsg)
		return false;
	kmsg_sink__stats(s->kmsg, st);
	return true;
}

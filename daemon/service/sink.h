/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the service's reports go: stderr, a log file, syslog/journald
 * with structured fields, the kernel log (kmsg.h).  Each report is
 * rendered once as KCSAN's text and once as a JSON line; the json setting picks which one stderr and
 * the log file get.  Dedup and filters have run before (engine.c).
 */
#ifndef KCSAND_SINK_H
#define KCSAND_SINK_H

#include <stdbool.h>

struct report_view;

struct sink_opts {
	bool to_stderr;
	bool to_syslog;
	bool to_kmsg;		/* KCSAN's text, line by line, to /dev/kmsg */
	bool json;
	const char *log;	/* path, or NULL */
};

/* The structured fields of a report, as journald gets them. */
struct sink_fields {
	const char *title;
	const char *func[2];	/* the two top functions; func[1] NULL for an unknown origin */
	const char *access[2];	/* KCSAN's access type words */
	unsigned long long addr;
	unsigned int pid[2], tid[2];
	const char *binary;	/* the probed object, or NULL */
};

struct sinks;

/* Open the sinks (the log file in append mode); -errno with a message. */
int sinks__open(const struct sink_opts *o, struct sinks **out);
/* Switch to new options; the log file is reopened (after logrotate), even when unchanged. */
int sinks__reconfigure(struct sinks *s, const struct sink_opts *o);
void sinks__emit(struct sinks *s, const struct sink_fields *f, const char *text, const char *json);
void sinks__free(struct sinks *s);
/* The kmsg sink's counters; false when it is off. */
struct kmsg_stats;
bool sinks__kmsg_stats(const struct sinks *s, struct kmsg_stats *st);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The engine: decoded sites, the loaded BPF object, its links, and the
 * report pipeline (ring buffer -> queue -> symbolize -> filter -> print).
 * Used by kcsand and by `kcsanctl run`.
 */
#ifndef KCSAND_ENGINE_H
#define KCSAND_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "kcsand.h"
#include "decode.h"

/* Defaults for user-space mode, chosen from measurements (docs/parameters.md). */
#define USER_DEFAULT_SKIP_WATCH		20
#define USER_DEFAULT_UDELAY_TASK	400
#define DEFAULT_REPORT_ONCE_IN_MS	3000

struct engine_opts {
	struct kcsand_params params;	/* initial live parameters */
	bool report_value_change_only;	/* KCSAN's CONFIG_KCSAN_REPORT_VALUE_CHANGE_ONLY */
	unsigned int report_once_in_ms;	/* KCSAN's CONFIG_KCSAN_REPORT_ONCE_IN_MS */
	bool json;
	int verbose;
	FILE *out;			/* where reports go */
	const char *functions;		/* comma-separated globs, NULL = all */
	struct decode_opts decode;
	bool trace_all;			/* no process filter: every process hitting the probes */
	bool force_per_site_links;	/* testing: the < 6.6 fallback */
	const char *source_dir;		/* marking: sources looked up here first (mark.h) */
	const char *marks_file;		/* marking: FUNC / FUNC+0xOFF / FILE:LINE entries */
};

/* A named parameter, for --param NAME=VALUE and (later) the control socket. */
struct param_desc {
	const char *name;
	size_t offset;			/* in struct kcsand_params, or -1 for daemon-side ones */
	unsigned int min, max;
	const char *help;
};

struct engine;

void engine_opts__init(struct engine_opts *o);
/* Set NAME to VALUE in o; a clear message on stderr and -EINVAL when bad. */
int engine_opts__set(struct engine_opts *o, const char *name, const char *value);
/* The same for "NAME=VALUE". */
int engine_opts__set_kv(struct engine_opts *o, const char *kv);
/* List the parameters with their ranges. */
void engine_params__print(FILE *out);
const struct param_desc *engine_params(size_t *n);

int engine__new(const struct engine_opts *o, struct engine **out);
/* Decode an object's functions (before engine__load). Returns sites added, or -errno. */
int engine__add_object(struct engine *e, const char *path);
/*
 * Replace the marks file (NULL: none) and mark every object's sites again;
 * once loaded, the BPF site table is rewritten, so this works live (for the
 * control socket).  A bad file changes nothing and returns -EINVAL.
 */
int engine__set_marks(struct engine *e, const char *path);
/* Load the BPF object sized for the decoded sites, and fill the site table. */
int engine__load(struct engine *e);
/* Attach every object's probes and the process-tracking tracepoints. */
int engine__attach(struct engine *e);
/* Trace this process (and, through the fork tracepoint, its descendants). */
int engine__add_pid(struct engine *e, pid_t pid);
/* Consume the ring buffer for up to timeout_ms and print what is due. */
int engine__poll(struct engine *e, int timeout_ms);
/* Reports printed so far. */
unsigned long engine__nr_reports(const struct engine *e);
/* One line of counters, for the end of a run. */
void engine__print_summary(struct engine *e, FILE *out);
size_t engine__nr_sites(const struct engine *e);
/*
 * One line per decoded site (address, function+offset, access, size, plain or
 * marked and why), then how many sites each rule marked.
 */
void engine__print_sites(const struct engine *e, FILE *out);
/* Only the per-rule counts line: "kcsand: marked sites: 3 lock prefix, ..." */
void engine__print_mark_counts(const struct engine *e, FILE *out);
/* Detach everything and free. */
void engine__free(struct engine *e);

#endif

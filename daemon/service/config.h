/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kcsand's configuration file (default /etc/kcsand.conf; docs/kcsand.conf
 * is the commented example).  One setting per line, words separated by
 * white space, '#' at the start of a word begins a comment:
 *
 *	target user PATH [--functions GLOB[,GLOB...]] [--pid PID]
 *	target kernel SPEC...		GLOB, module:NAME, FUNC+0xOFF, !GLOB (kernel_spec.h)
 *	watch SPEC [--pid PID|--kernel]	a hardware watchpoint on a variable (watch_spec.h)
 *	kernel_debug PATH		a vmlinux or NAME.ko with DWARF (repeatable)
 *	PARAM VALUE			(any name of params.c's table)
 *	filter FUNC...			KCSAN's filter list
 *	filter_mode blacklist|whitelist
 *	filter_file PATH		one function per line, # comments
 *	stderr|syslog|json yes|no	sinks and the report format
 *	history yes|no			the happens-before history for user targets (default yes)
 *	log PATH
 *	socket PATH
 *	socket_group GROUP
 *	max_sites N
 *
 * config__parse() is a pure function of the text, so that a fuzzer can
 * call it; config__load() reads the file and the filter files it names.
 */
#ifndef KCSAND_CONFIG_H
#define KCSAND_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include "report/filter.h"

#define CONFIG_DEFAULT_PATH	"/etc/kcsand.conf"
#define CONFIG_MAX_LINE		4096
#define CONFIG_MAX_SIZE		(1 << 20)
#define CONFIG_MAX_TARGETS	256
#define CONFIG_MAX_PARAMS	32
#define CONFIG_MAX_FILTER_FILES	16
#define CONFIG_MAX_KERNEL_DEBUG	16
#define CONFIG_MAX_SPECS	32	/* specs of one kernel target */
/* Watches: four debug registers for user targets, four for the kernel. */
#define CONFIG_MAX_WATCHES	8

/*
 * A user target (binary set) or a kernel one (kernel set, binary NULL).
 * A kernel target's specs are kept as one string, separated by single
 * spaces, so that two targets compare as strings.
 */
struct config_target {
	char *binary;		/* absolute path */
	char *functions;	/* comma-separated globs, or NULL for every function */
	int pid;		/* 0: every process running binary */
	bool kernel;
	char *specs;		/* kernel: "SPEC SPEC ..." */
};

/* A watch line: SPEC, and the process (0: the one running a probed user target) or the kernel. */
struct config_watch {
	char *spec;
	int pid;
	bool kernel;
};

/* A tri-state for settings that the command line may also give. */
enum config_bool {
	CONFIG_UNSET = -1,
	CONFIG_NO = 0,
	CONFIG_YES = 1,
};

struct config {
	struct config_target targets[CONFIG_MAX_TARGETS];
	size_t nr_targets;
	struct config_watch watches[CONFIG_MAX_WATCHES];
	size_t nr_watches;
	/* Parameters by index in param__table(); set[i] says whether the file gave one. */
	unsigned int values[CONFIG_MAX_PARAMS];
	bool set[CONFIG_MAX_PARAMS];
	struct filter filter;
	char *filter_files[CONFIG_MAX_FILTER_FILES];
	size_t nr_filter_files;
	char *kernel_debug[CONFIG_MAX_KERNEL_DEBUG];
	size_t nr_kernel_debug;
	enum config_bool to_stderr, to_syslog, to_kmsg, json;
	char *log;
	char *socket;
	char *socket_group;
	size_t max_sites;	/* 0: the engine's default */
	enum config_bool history;	/* UNSET: yes */
};

void config__init(struct config *c);
void config__free(struct config *c);
/*
 * Parse text (len bytes, NUL bytes refused) named name in messages.  On
 * error, returns a negative errno with err set to "NAME:LINE: why"; c
 * must be freed either way.
 */
int config__parse(const char *text, size_t len, const char *name, struct config *c, char *err,
		  size_t errlen);
/* Read and parse path, then load the filter files it names. */
int config__load(const char *path, struct config *c, char *err, size_t errlen);
/* Is w the same watch as v? */
bool config__watch_eq(const struct config_watch *w, const struct config_watch *v);
/* Is t the same target as u? */
bool config__target_eq(const struct config_target *t, const struct config_target *u);
/*
 * Split a kernel target's specs into out (at most max), pointing into
 * buf, a copy of them of buflen bytes; the number of specs, or -E2BIG.
 */
int config__split_specs(const char *specs, char *buf, size_t buflen, const char **out,
			size_t max);

#endif

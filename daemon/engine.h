/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The engine: probed objects and their sites, the loaded BPF object and
 * its links, and the report pipeline (ring buffer -> queue -> symbolize ->
 * filter -> print).  Used by kcsand and by `kcsanctl run`.
 */
#ifndef KCSAND_ENGINE_H
#define KCSAND_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "kcsand.h"
#include "decode.h"
#include "params.h"

/* Defaults for user-space mode, chosen from measurements (docs/parameters.md). */
#define USER_DEFAULT_SKIP_WATCH		100u
#define USER_DEFAULT_UDELAY_TASK	400u
#define DEFAULT_REPORT_ONCE_IN_MS	3000u
/*
 * At most half of each CPU-second stalled: no stretch of back-to-back
 * watchpoints can starve the watchdog threads, RCU or the target.
 */
#define DEFAULT_STALL_BUDGET_US		500000u
/* Kernel mode keeps KCSAN's delays; hits are rarer per site than in a test loop. */
#define KERNEL_DEFAULT_SKIP_WATCH	100u
#define KERNEL_DEFAULT_UDELAY_TASK	80u
/* Site-table capacity: 24 bytes a site in BPF; objects added later share it. */
#define DEFAULT_MAX_SITES		65536u

struct engine_opts {
	struct kcsand_params params;	/* initial live parameters */
	bool report_value_change_only;	/* KCSAN's CONFIG_KCSAN_REPORT_VALUE_CHANGE_ONLY */
	unsigned int report_once_in_ms;	/* KCSAN's CONFIG_KCSAN_REPORT_ONCE_IN_MS */
	bool json;
	int verbose;
	FILE *out;			/* where reports go */
	const char *functions;		/* comma-separated globs, NULL = all */
	struct decode_opts decode;
	size_t max_sites;		/* site-table capacity, for objects added after load */
	bool force_per_site_links;	/* the < 6.6 fallback, on any kernel */
	bool kernel;			/* kernel mode: kprobes on kernel functions */
	const char *const *kernel_debug; /* kernel mode: vmlinux / NAME.ko files with DWARF */
	size_t nr_kernel_debug;
	const char *source_dir;		/* marking: sources looked up here first (mark.h) */
	const char *marks_file;		/* marking: FUNC / FUNC+0xOFF / FILE:LINE entries */
	bool no_marking;		/* only lock prefixes and xchg mark accesses */
};

struct engine;

void engine_opts__init(struct engine_opts *o);
/* Set NAME to VALUE in o; a clear message on stderr and -EINVAL when bad. */
int engine_opts__set(struct engine_opts *o, const char *name, const char *value);
/* The same for "NAME=VALUE". */
int engine_opts__set_kv(struct engine_opts *o, const char *kv);

int engine__new(const struct engine_opts *o, struct engine **out);
/* Load the BPF object and attach the process-tracking tracepoints. */
int engine__load(struct engine *e);
/*
 * Decode the functions of an ELF object matching globs (NULL: the engine's
 * --functions) and probe them.  Before engine__load(), the object is only
 * decoded and engine__attach() probes it; after, it is probed at once.
 * Returns an object id >= 0, or a negative errno with a message.
 */
int engine__add_object(struct engine *e, const char *path, const char *globs);
/*
 * Kernel mode: probe the kernel functions chosen by specs (ktarget.h:
 * GLOB, module:NAME, FUNC+0xOFF), one kprobe per site.  A site the kernel
 * refuses is named and counted, and the rest stay attached.  Returns an
 * object id >= 0, or a negative errno with a message.
 */
int engine__add_kernel(struct engine *e, const char *const *specs, size_t nr_specs);
/* Detach an object's probes; its sites stay known for reports in flight. */
int engine__remove_object(struct engine *e, int id);
/* Probe every object added before load. */
int engine__attach(struct engine *e);
/* Trace this process (and, through the fork tracepoint, its descendants). */
int engine__add_pid(struct engine *e, pid_t pid);
int engine__remove_pid(struct engine *e, pid_t pid);

/*
 * Replace the marks file (NULL: none) and mark every object's sites again;
 * once loaded, the BPF site table is rewritten, so this works live (for the
 * control socket).  A bad file changes nothing and returns -EINVAL.
 */
int engine__set_marks(struct engine *e, const char *path);
/*
 * One line per decoded site (address, function+offset, access, size, plain or
 * marked and why), then how many sites each rule marked.
 */
void engine__print_sites(const struct engine *e, FILE *out);
/* Only the per-rule counts line: "kcsand: marked sites: 3 lock prefix, ..." */
void engine__print_mark_counts(const struct engine *e, FILE *out);

/* Live parameters, by name: changed in the loaded BPF object without reloading. */
int engine__set_param(struct engine *e, const char *name, const char *value);
int engine__get_param(const struct engine *e, const char *name, unsigned int *value);

/* Consume the ring buffer for up to timeout_ms and print what is due. */
int engine__poll(struct engine *e, int timeout_ms);
/* Reports printed so far. */
unsigned long engine__nr_reports(const struct engine *e);
/* Counters: KCSAN's and kcsand's own, summed over CPUs where per-CPU. */
void engine__counters(const struct engine *e, uint64_t out[KCSAND_CTR_COUNT]);
uint64_t engine__hits(const struct engine *e);
/* Sites currently probed. */
size_t engine__nr_sites(const struct engine *e);
/* One line of counters, for the end of a run. */
void engine__print_summary(struct engine *e, FILE *out);
/* Detach everything and free. */
void engine__free(struct engine *e);

#endif

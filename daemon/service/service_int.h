/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The service's state, shared by service.c (probes, filters, reports,
 * parameters), reload.c (SIGHUP), kernel.c (the kernel-mode
 * engine) and request.c (executing control requests).  Private to them.
 */
#ifndef KCSAND_SERVICE_INT_H
#define KCSAND_SERVICE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "config.h"
#include "engine/engine.h"
#include "report/filter.h"
#include "hw/hwbp.h"
#include "service.h"
#include "util/print.h"

struct engine;
struct sinks;
struct param_desc;

/* Reports kept for `reports` without follow. */
#define RECENT_MAX 32

/*
 * A probed target.  id is what `probe list` shows and `probe remove`
 * takes: one counter for both engines, so ids never collide.  obj is the
 * object id in the engine of t.kernel's mode.  Targets of the
 * configuration are marked so that a reload touches only those, never
 * the socket's.
 */
struct probe {
	unsigned int id;
	struct config_target t;
	int obj;
	long sites;
	bool from_config;
};

/*
 * A watch: a hardware watchpoint on one variable of one process (or of
 * the kernel) for as long as asked (watch.c).  cw is what was
 * asked (pid 0: the one process running a probed user target), pid the
 * process chosen.  A watch whose process exited keeps its place in
 * `watch list` with dropped saying so, its slot freed, until removed.
 */
struct watch {
	unsigned int id;
	struct config_watch cw;
	bool from_config;
	pid_t pid;			/* -1: kernel */
	unsigned long long start;	/* the process's start time: a reused pid is another */
	int slot;			/* in the engine of cw.kernel's mode; -1 once dropped */
	bool traced_by_us;		/* the watch put pid in the traced set */
	char *object;			/* the ELF file SYMBOL was found in; NULL: an ADDRESS */
	time_t until;			/* --duration: removed then; 0: until removed */
	const char *dropped;		/* why it no longer watches; NULL while it does */
};

struct recent {
	char *text, *json;
};

/*
 * One engine of the service, and the context of its report hooks (which
 * engine a report's site belongs to).  The engine's kernel flag changes
 * its defaults, symbolization and context, so user and kernel targets
 * each have their own: the user engine lives as long as the service, the
 * kernel engine while a kernel target does (kernel.c).
 */
struct service_engine {
	struct service *s;
	struct engine *e;		/* NULL: none (kernel, without kernel targets) */
	bool kernel;
};

/* What stats shows: the engines' counters summed (service_totals()). */
struct service_totals {
	uint64_t c[KCSAND_CTR_COUNT];
	uint64_t fig[ENGINE_FIG_COUNT];	/* sites, hits, reports, drops (engine.h) */
	struct hwbp_stats hw;
};

/* Everything is touched from the one thread of main.c's poll loop: no locks. */
struct service {
	struct service_opts o;
	struct config cfg;		/* as loaded: a reload diffs against it */
	const struct config *loading;	/* during a reload, the new configuration */
	struct service_engine user, kernel;
	/*
	 * What the next kernel engine is created with: the kernel defaults,
	 * the file's parameters, and every later `set`, so that an engine made
	 * after a `set` has the value too.  Its kernel_debug points at kdebug,
	 * the files the current kernel engine was made with.
	 */
	struct engine_opts kopts;
	char *kdebug[CONFIG_MAX_KERNEL_DEBUG];
	size_t nr_kdebug;
	struct service_totals retired;	/* kernel engines freed since the start */
	int epfd;			/* both engines' ring buffers, for main.c's poll */
	struct filter filter;		/* the live list: config, then socket changes */
	struct sinks *sinks;
	struct ctl_server *ctl;
	struct probe *probes;
	size_t nr_probes, cap_probes;
	unsigned int next_id;
	struct watch *watches;
	size_t nr_watches, cap_watches;
	unsigned int next_watch_id;	/* watches have ids of their own */
	struct recent recent[RECENT_MAX];
	size_t nr_recent;		/* total pushed; the ring holds the last RECENT_MAX */
	time_t started;
};

__attribute__((format(printf, 3, 4)))
void service_say(const struct service *s, int prio, const char *fmt, ...);
/*
 * The reason an engine call failed, for the client that asked (it never
 * sees the daemon's stderr, and a background daemon has none): the
 * service's print function (util/print.h) passes every message it shows
 * on to stderr and keeps the last warning's line (not info or debug).
 * service_why_begin() before the call; service_why(ret, ...) after it
 * puts that line, or strerror, in err when ret < 0, and returns ret.
 */
void service_why_begin(void);
int service_why(int ret, char *err, size_t errlen);
/* The service's print function: stderr as always, and the last complete warning kept. */
int service_print(enum kcsand_print_level level, const char *fmt, va_list ap);
/* Make nf (taken over) the live filter list and push it into the site tables. */
int service_replace_filter(struct service *s, struct filter *nf);
/*
 * Attach a target under id (0: the next free one); its probe id, or
 * -errno with the reason in err.  Nothing changes on failure, but for a
 * kernel engine left without targets: callers end with service_kernel_gc().
 */
int service_add_probe(struct service *s, const struct config_target *t, bool from_config,
		      unsigned int id, char *err, size_t errlen);
struct probe *service_find_probe(struct service *s, unsigned int id);
/* Detach it; the kernel engine stays until service_kernel_gc(). */
void service_remove_probe(struct service *s, struct probe *p);
size_t service_nr_probes(const struct service *s, bool kernel);
/* Set a parameter (a value in its range) in both engines and kopts, or in one mode's only. */
void service_set_param(struct service *s, const struct param_desc *p, unsigned int v);
void service_set_param_in(struct service *s, bool kernel, const struct param_desc *p,
			  unsigned int v);
/* A parameter's default in user or kernel mode. */
unsigned int service_param_default(const struct param_desc *p, bool kernel);
/* The sinks c asks for, with the command line's overrides. */
struct sink_opts;
void service_sink_opts(const struct service *s, const struct config *c, struct sink_opts *so);
/* The engine options of a mode: its defaults, then c's parameters; no hooks. */
void service_mode_opts(const struct config *c, bool kernel, struct engine_opts *o);

/* Is pid the --pid of a user probe? */
bool service_pid_probed(const struct service *s, int pid);

/* watch.c: watches. */
/*
 * Arm a watch (a kernel one makes the kernel engine first if needed); its
 * id, or -errno with the reason in err, and nothing changed.
 */
int service_add_watch(struct service *s, const struct config_watch *cw, unsigned int duration_s,
		      bool from_config, char *err, size_t errlen);
struct watch *service_find_watch(struct service *s, unsigned int id);
/* Disarm it (if still armed) and forget it. */
void service_remove_watch(struct service *s, struct watch *w);
/* Watches still armed in one mode's engine. */
size_t service_nr_watches(const struct service *s, bool kernel);
/* From the poll loop: drop watches whose process exited, remove those whose time is up. */
void service_watch_tick(struct service *s);
/* `watch list`: one line per watch and the slots in use, or JSON. */
void service_print_watches(const struct service *s, FILE *out, bool json);
/*
 * A probe of pid goes: is a watch on pid left?  Then it keeps pid traced
 * (and untraces it when it goes itself).
 */
bool service_watch_keeps_pid(struct service *s, int pid);
/* Every watch and the lists of them, at exit. */
void service_free_watches(struct service *s);

/* kernel.c: the kernel engine's life. */
/* Attach a kernel target, creating the engine first if needed: its object id, or -errno. */
int service_kernel_add(struct service *s, const struct config_target *t, char *err,
		       size_t errlen);
/* Make the kernel engine, with no kprobe, if there is none (a kernel watch alone). */
int service_kernel_engine(struct service *s, char *err, size_t errlen);
/* Free the kernel engine when no kernel target or watch is left; its counters go to retired. */
void service_kernel_gc(struct service *s);
/* The counters of both engines and of the retired ones. */
void service_totals(const struct service *s, struct service_totals *t);

#endif

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The service's watches (`kcsanctl watch`, the configuration's `watch`
 * lines): DataCollider's scheme on one variable, a hardware watchpoint
 * that sees every access to it, probed or not, for as long as asked.
 *
 * A user watch arms a slot of the user engine on every thread of one
 * process, which the watch puts in the traced set if it is not there
 * already (the trap program ignores untraced processes).  A kernel watch
 * arms a slot of the kernel engine on every CPU; with no kernel target,
 * the watch makes that engine itself, with no kprobe, as `kcsanctl run
 * --kernel --watch` without --probe does, and the engine goes with the
 * last kernel target or watch.
 *
 * The four debug registers are shared with escalations (hwbp.c): a watch
 * takes a free slot or evicts an escalation, and is refused when every
 * slot holds a watch.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include "hw/hwbp.h"
#include "hw/watch_spec.h"
#include "report/report.h"
#include "service_int.h"
#include "util/array.h"
#include "util/json.h"
#include "util/proc_maps.h"
#include "util/proc_stat.h"

#define MAX_CANDIDATES	8	/* processes named in a refusal */

static struct engine *engine_of(const struct service *s, const struct watch *w)
{
	return w->cw.kernel ? s->kernel.e : s->user.e;
}

/*
 * A process's start time (field 22 of /proc/PID/stat), or 0 when it is
 * gone or a zombie: a watch on it has nothing left to watch.
 */
static unsigned long long proc_start(pid_t pid)
{
	struct proc_stat st;

	if (proc_stat__read(pid, 0, &st))
		return 0;
	return st.state == 'Z' || st.state == 'X' ? 0 : st.starttime;
}

/* The file /proc/PID/exe names, into buf; -errno. */
static int proc_exe(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int maps_file(const struct proc_map *m, void *real)
{
	return !strcmp(m->path, real);
}

/* Does pid map the file real (a resolved path)? */
static bool proc_maps(pid_t pid, const char *real)
{
	return proc_maps__for_each(pid, maps_file, (void *)real) > 0;
}

/* Does pid run a probed user target: the --pid of one, or its binary (or library)? */
static bool runs_target(const struct service *s, pid_t pid, const char *exe)
{
	for (size_t i = 0; i < s->nr_probes; i++) {
		const struct config_target *t = &s->probes[i].t;
		char real[PATH_MAX];

		if (t->kernel)
			continue;
		if (t->pid) {
			if (t->pid == pid)
				return true;
			continue;
		}
		if (!realpath(t->binary, real))
			continue;
		if (!strcmp(exe, real) || proc_maps(pid, real))
			return true;
	}
	return false;
}

/*
 * No --pid: the one running process that runs a probed user target
 * (kcsand itself, which maps them to decode them, left out); else a
 * refusal naming the candidates.
 */
static int choose_pid(const struct service *s, const char *spec, char *err, size_t errlen)
{
	pid_t found[MAX_CANDIDATES];
	size_t n = 0, len;
	struct dirent *d;
	DIR *dp;

	dp = opendir("/proc");
	if (!dp) {
		int ret = -errno;

		snprintf(err, errlen, "watch %s: cannot list /proc: %s", spec, strerror(-ret));
		return ret;
	}
	while ((d = readdir(dp))) {
		pid_t pid = atoi(d->d_name);
		char exe[PATH_MAX];

		if (pid <= 0 || pid == getpid() || proc_exe(pid, exe, sizeof(exe)))
			continue;
		if (!runs_target(s, pid, exe) || !proc_start(pid))
			continue;
		if (n < MAX_CANDIDATES)
			found[n] = pid;
		n++;
	}
	closedir(dp);
	if (n == 1)
		return found[0];
	if (!n) {
		snprintf(err, errlen, "watch %s: no running process runs a probed user target: "
			 "give --pid PID (or --kernel)", spec);
		return -ESRCH;
	}
	len = snprintf(err, errlen, "watch %s: %zu processes run probed user targets (", spec, n);
	for (size_t i = 0; i < n && i < MAX_CANDIDATES && len < errlen; i++)
		len += snprintf(err + len, errlen - len, "%s%d", i ? ", " : "", found[i]);
	if (len < errlen)
		snprintf(err + len, errlen - len, "%s): choose one with --pid PID",
			 n > MAX_CANDIDATES ? ", ..." : "");
	return -ENOTUNIQ;
}

struct watch_call {
	struct engine *e;
	pid_t pid;
	const char *path, *spec;
};

/*
 * SYMBOL[:LEN] of a user watch (parsed as ws), as the ADDRESS:LEN to arm:
 * the variable in the process's executable, else in a probed object the
 * process maps.  The file it was found in goes to *object.
 */
static int resolve_user(const struct service *s, pid_t pid, const char *spec,
			const struct watch_spec *ws, char *out, size_t outlen, char **object,
			char *err, size_t errlen)
{
	char exe[PATH_MAX], real[PATH_MAX];
	const char *name = ws->symbol;
	uint64_t addr, size;
	unsigned int len = ws->len;
	const char *where = NULL;
	int ret;

	ret = proc_exe(pid, exe, sizeof(exe));
	if (ret) {
		snprintf(err, errlen, "watch %s: cannot read /proc/%d/exe: %s", spec, pid,
			 strerror(-ret));
		return ret;
	}
	if (!hwbp__resolve_symbol(pid, exe, false, name, &addr, &size))
		where = exe;
	for (size_t i = 0; !where && i < s->nr_probes; i++) {
		const struct config_target *t = &s->probes[i].t;

		if (t->kernel || !realpath(t->binary, real) || !strcmp(real, exe) ||
		    !proc_maps(pid, real))
			continue;
		if (!hwbp__resolve_symbol(pid, real, true, name, &addr, &size))
			where = real;
	}
	if (!where) {
		snprintf(err, errlen, "watch %s: no variable '%s' in %s or in a probed object "
			 "process %d maps", spec, name, exe, pid);
		return -ENOENT;
	}
	if (!len)
		len = size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1;
	snprintf(out, outlen, "0x%" PRIx64 ":%u", addr, len);
	*object = strdup(where);
	return *object ? 0 : -ENOMEM;
}

static struct watch *find_same(struct service *s, const struct config_watch *cw, pid_t pid)
{
	for (size_t i = 0; i < s->nr_watches; i++) {
		struct watch *w = &s->watches[i];

		if (!w->dropped && w->cw.kernel == cw->kernel && w->pid == pid &&
		    !strcmp(w->cw.spec, cw->spec))
			return w;
	}
	return NULL;
}

/* Arm w (its cw and pid set) in its engine: its slot, or -errno with the reason in err. */
static int arm_watch(struct service *s, struct watch *w, char *err, size_t errlen)
{
	struct watch_call c = { .pid = w->pid, .spec = w->cw.spec };
	struct watch_spec ws;
	char addr[64];
	int ret;

	if (w->cw.kernel) {
		ret = service_kernel_engine(s, err, errlen);
		if (ret)
			return ret;
		c.e = s->kernel.e;
		c.pid = -1;
	} else {
		const char *why = hwbp__no_traps_why();

		if (why) {	/* before resolving: the reason names the spec as given */
			snprintf(err, errlen, "watch %s: %s", w->cw.spec, why);
			return -EOPNOTSUPP;
		}
		c.e = s->user.e;
		/* Parsed when it was given; were it bad, engine__watch() says why. */
		if (!watch_spec__parse(w->cw.spec, &ws) && ws.symbol[0]) {
			ret = resolve_user(s, w->pid, w->cw.spec, &ws, addr, sizeof(addr),
					   &w->object, err, errlen);
			if (ret)
				return ret;
			c.spec = addr;
		}
	}
	service_why_begin();
	ret = service_why(engine__watch(c.e, c.pid, c.path, c.spec), err, errlen);
	if (ret == -ENOSPC)
		snprintf(err, errlen, "watch %s: no hardware watchpoint free: the %d debug registers "
			 "of the %s engine hold watches (kcsanctl watch list)", w->cw.spec,
			 KCSAND_HW_SLOTS, w->cw.kernel ? "kernel" : "user");
	return ret;
}

/* A user watch's process: the one given, or the one running the object; and when it started. */
static int watch_process(struct service *s, const char *spec, struct watch *w, char *err,
			 size_t errlen)
{
	if (!w->pid) {
		w->pid = choose_pid(s, spec, err, errlen);
		if (w->pid < 0)
			return w->pid;
	}
	w->start = proc_start(w->pid);
	if (!w->start) {
		snprintf(err, errlen, "watch %s: no process %d", spec, w->pid);
		return -ESRCH;
	}
	return 0;
}

int service_add_watch(struct service *s, const struct config_watch *cw, unsigned int duration_s,
		      bool from_config, char *err, size_t errlen)
{
	struct watch w = {
		.id = s->next_watch_id,
		.from_config = from_config,
		.pid = cw->kernel ? -1 : cw->pid,
		.slot = -1,
	};
	struct watch *same;
	int ret;

	if (ARRAY_RESERVE(s->watches, s->cap_watches, s->nr_watches, 4)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (!cw->kernel) {
		ret = watch_process(s, cw->spec, &w, err, errlen);
		if (ret)
			return ret;
	}
	same = find_same(s, cw, w.pid);
	if (same) {
		snprintf(err, errlen, "watch %s: watch %u watches it already", cw->spec, same->id);
		return -EEXIST;
	}
	w.cw = (struct config_watch){ strdup(cw->spec), cw->pid, cw->kernel };
	if (!w.cw.spec) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w.slot = arm_watch(s, &w, err, errlen);
	if (w.slot >= 0 && !cw->kernel && !engine__pid_traced(s->user.e, w.pid)) {
		ret = engine__add_pid(s->user.e, w.pid);
		if (ret) {
			engine__unwatch(s->user.e, w.slot);
			snprintf(err, errlen, "watch %s: cannot trace pid %d: %s", cw->spec, w.pid,
				 strerror(-ret));
			w.slot = ret;
		}
		w.traced_by_us = true;
	}
	if (w.slot < 0) {
		free(w.cw.spec);
		free(w.object);
		return w.slot;
	}
	if (duration_s)
		w.until = time(NULL) + duration_s;
	s->next_watch_id++;
	s->watches[s->nr_watches++] = w;
	if (cw->kernel)
		service_say(s, LOG_INFO, "watch %u: kernel %s, slot %d", w.id, cw->spec, w.slot);
	else
		service_say(s, LOG_INFO, "watch %u: %s in process %d%s%s, slot %d", w.id, cw->spec,
			    w.pid, w.object ? " from " : "", w.object ? w.object : "", w.slot);
	return (int)w.id;
}

struct watch *service_find_watch(struct service *s, unsigned int id)
{
	for (size_t i = 0; i < s->nr_watches; i++)
		if (s->watches[i].id == id)
			return &s->watches[i];
	return NULL;
}

/* Another armed user watch on w's process, to hand pid's tracing to. */
static struct watch *other_on_pid(struct service *s, const struct watch *w)
{
	for (size_t i = 0; i < s->nr_watches; i++) {
		struct watch *o = &s->watches[i];

		if (o != w && !o->dropped && !o->cw.kernel && o->pid == w->pid)
			return o;
	}
	return NULL;
}

bool service_watch_keeps_pid(struct service *s, int pid)
{
	for (size_t i = 0; i < s->nr_watches; i++) {
		struct watch *w = &s->watches[i];

		if (!w->dropped && !w->cw.kernel && w->pid == pid) {
			w->traced_by_us = true;
			return true;
		}
	}
	return false;
}

/* Free w's slot, and untrace its process if the watch traced it and nothing else needs it. */
static void disarm(struct service *s, struct watch *w, const char *why)
{
	struct watch *o;

	if (w->dropped)
		return;
	engine__unwatch(engine_of(s, w), w->slot);
	w->slot = -1;
	w->dropped = why;
	if (!w->cw.kernel && w->traced_by_us) {
		o = other_on_pid(s, w);
		if (o)
			o->traced_by_us = true;
		else if (!service_pid_probed(s, w->pid))
			engine__remove_pid(s->user.e, w->pid);
		w->traced_by_us = false;
	}
}

void service_remove_watch(struct service *s, struct watch *w)
{
	struct watch gone;

	disarm(s, w, "removed");
	gone = *w;
	*w = s->watches[--s->nr_watches];
	service_say(s, LOG_INFO, "watch %u: %s%s removed", gone.id, gone.cw.kernel ? "kernel " : "",
		    gone.cw.spec);
	free(gone.cw.spec);
	free(gone.object);
}

size_t service_nr_watches(const struct service *s, bool kernel)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr_watches; i++)
		n += !s->watches[i].dropped && s->watches[i].cw.kernel == kernel;
	return n;
}

void service_watch_tick(struct service *s)
{
	time_t now = time(NULL);

	for (size_t i = 0; i < s->nr_watches;) {
		struct watch *w = &s->watches[i];

		if (!w->dropped && !w->cw.kernel && proc_start(w->pid) != w->start) {
			disarm(s, w, "process exited");
			service_say(s, LOG_INFO, "watch %u: %s: process %d exited, watch dropped",
				    w->id, w->cw.spec, w->pid);
		}
		if (w->until && now >= w->until) {
			service_say(s, LOG_INFO, "watch %u: %s: its duration is over", w->id,
				    w->cw.spec);
			service_remove_watch(s, w);	/* moves the last watch here */
			continue;
		}
		i++;
	}
	/* A kernel engine kept only for a watch whose time is up goes. */
	service_kernel_gc(s);
}

static struct json_object *watch_json(const struct service *s, const struct watch *w)
{
	struct json_object *o = json_object_new_object();
	struct hwbp_slot_info si;
	bool armed = !w->dropped && !engine__watch_info(engine_of(s, w), w->slot, &si);
	char addr[32];

	json__add(o, "id", json_object_new_int64(w->id));
	json__add(o, "kind", json__string(w->cw.kernel ? "kernel" : "user"));
	json__add(o, "spec", json__string(w->cw.spec));
	json__add(o, "pid", json_object_new_int64(w->cw.kernel ? 0 : w->pid));
	json__add(o, "object", json__string_or_null(w->object));
	if (armed) {
		snprintf(addr, sizeof(addr), "0x%" PRIx64, si.addr);
		json__add(o, "state", json__string("armed"));
		json__add(o, "slot", json_object_new_int64(w->slot));
		json__add(o, "addr", json__string(addr));
		json__add(o, "len", json_object_new_int64(si.len));
		json__add(o, "events", json_object_new_uint64(si.events));
	} else {
		json__add(o, "state", json__string("dropped"));
		json__add(o, "why", json__string(w->dropped ? w->dropped : "slot lost"));
	}
	json__add(o, "remaining_s",
		  json_object_new_int64(w->until ? (long)(w->until - time(NULL)) : -1L));
	json__add(o, "from_config", json_object_new_boolean(w->from_config));
	return o;
}

static void print_watch(const struct service *s, const struct watch *w, FILE *out)
{
	struct hwbp_slot_info si;

	if (w->cw.kernel)
		fprintf(out, "%u: kernel %s", w->id, w->cw.spec);
	else
		fprintf(out, "%u: user %s pid=%d", w->id, w->cw.spec, w->pid);
	if (w->dropped || engine__watch_info(engine_of(s, w), w->slot, &si))
		fprintf(out, " dropped: %s", w->dropped ? w->dropped : "slot lost");
	else
		fprintf(out, " slot=%d addr=0x%" PRIx64 " len=%u %s=%zu", w->slot, si.addr, si.len,
			w->cw.kernel ? "cpus" : "threads", si.events);
	if (w->until)
		fprintf(out, " remaining=%lds", (long)(w->until - time(NULL)));
	fprintf(out, "%s\n", w->from_config ? " (config)" : "");
}

void service_print_watches(const struct service *s, FILE *out, bool json)
{
	int user = engine__hw_slots_in_use(s->user.e);
	int kernel = s->kernel.e ? engine__hw_slots_in_use(s->kernel.e) : 0;

	if (json) {
		struct json_object *o = json_object_new_object(), *in_use = json_object_new_object();
		struct json_object *a = json_object_new_array();

		json__add(o, "slots", json_object_new_int64(KCSAND_HW_SLOTS));
		json__add(in_use, "user", json_object_new_int64(user));
		json__add(in_use, "kernel", json_object_new_int64(kernel));
		json__add(o, "slots_in_use", in_use);
		for (size_t i = 0; i < s->nr_watches; i++)
			json_object_array_add(a, watch_json(s, &s->watches[i]));
		json__add(o, "watches", a);
		json__print(out, o);
		fputc('\n', out);
		return;
	}
	for (size_t i = 0; i < s->nr_watches; i++)
		print_watch(s, &s->watches[i], out);
	/* Escalations hold slots too, for a moment: what a new watch competes with. */
	fprintf(out, "hardware watchpoint slots in use: user %d/%d", user, KCSAND_HW_SLOTS);
	if (s->kernel.e)
		fprintf(out, ", kernel %d/%d", kernel, KCSAND_HW_SLOTS);
	fputc('\n', out);
}

void service_free_watches(struct service *s)
{
	for (size_t i = 0; i < s->nr_watches; i++) {
		free(s->watches[i].cw.spec);
		free(s->watches[i].object);
	}
	free(s->watches);
	s->watches = NULL;
	s->nr_watches = s->cap_watches = 0;
}

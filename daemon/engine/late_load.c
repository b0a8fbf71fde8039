// SPDX-License-Identifier: GPL-2.0-only
/* Loading a program after the run starts: see late_load.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "late_load.h"
#include "engine_int.h"
#include "kcsand.h"
#include "sampler/sampler.h"
#include "sampler/thread_turn.h"
#include "kcsand.skel.h"
#include "util/clock.h"
#include "util/print.h"

#define LATE_CALIB_CALLS	500
#define LATE_WATCH_NICE		10

/* Where a job is: its owner frees it once it is done; a job its owner left frees itself. */
enum job_state { JOB_RUNNING, JOB_DONE, JOB_LEFT };

/* One program loaded on a thread of its own, at nice (0: the daemon's). */
struct late_job {
	struct kcsand_bpf *first;	/* whose maps it shares; read until opened */
	const char *name;
	int nice;
	bool calibrate;			/* time the program's trap once loaded (kcsand_xbp) */
	pthread_t thread;
	bool started, taken;
	int opened;			/* atomic: done with first */
	int state;			/* atomic: enum job_state */
	int err;
	double trap_ns;
	struct kcsand_bpf *skel;
};

/*
 * kcsand_xbp for hot turns (its trap calibrated once loaded), once the
 * targets have run a while or at the first turn, and the history's
 * watches' program at a lower priority, so that hot turns do not wait for
 * it where CPUs are short.
 */
struct late_load {
	struct kcsand_bpf *first;
	struct late_job *xbp, *watch;
	bool xbp_tried;
};

/*
 * A second instance of first, every map first's, with only the program named
 * name to load: opened, not loaded (the verifier's part is the caller's).
 */
static int open_only(struct kcsand_bpf *first, const char *name, struct kcsand_bpf **out)
{
	struct kcsand_bpf *skel = kcsand_bpf__open();
	struct bpf_program *p;
	struct bpf_map *m;
	int err;

	*out = skel;
	if (!skel)
		return -errno;
	bpf_object__for_each_map(m, skel->obj) {
		const struct bpf_map *f = bpf_object__find_map_by_name(first->obj,
								       bpf_map__name(m));

		if (!f || bpf_map__fd(f) < 0)
			return -ENOENT;
		err = bpf_map__reuse_fd(m, bpf_map__fd(f));
		if (err)
			return err;
	}
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
	return 0;
}

/* A second instance of first, every map first's, with only the program named name loaded. */
static int load_only(struct kcsand_bpf *first, const char *name, struct kcsand_bpf **out)
{
	int err = open_only(first, name, out);

	return err ? err : kcsand_bpf__load(*out);
}

static void job_destroy(struct late_job *j)
{
	kcsand_bpf__destroy(j->skel);
	free(j);
}

static void *run(void *arg)
{
	struct late_job *j = arg;
	int running = JOB_RUNNING;

	if (j->nice)
		setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), j->nice);
	j->err = open_only(j->first, j->name, &j->skel);
	__atomic_store_n(&j->opened, 1, __ATOMIC_RELEASE);
	if (!j->err)
		j->err = kcsand_bpf__load(j->skel);
	if (!j->err && j->calibrate)
		j->trap_ns = thread_turn__trap_ns(j->skel->progs.kcsand_xbp, sampler_calib_target,
						  LATE_CALIB_CALLS);
	if (!__atomic_compare_exchange_n(&j->state, &running, JOB_DONE, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		job_destroy(j);	/* left by late_load__free(): nobody waits for it */
	return NULL;
}

/* A job loading the program name on a thread of its own; NULL without memory. */
static struct late_job *job_start(struct kcsand_bpf *first, const char *name, int nice,
				  bool calibrate)
{
	struct late_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	*j = (struct late_job){ .first = first, .name = name, .nice = nice,
				.calibrate = calibrate };
	j->started = !pthread_create(&j->thread, NULL, run, j);
	return j;
}

int late_load__new(struct kcsand_bpf *skel, struct late_load **out)
{
	struct late_load *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->first = skel;
	*out = l;
	return 0;
}

void late_load__start_xbp(struct late_load *l)
{
	if (!l || l->xbp_tried)
		return;
	l->xbp_tried = true;
	l->xbp = job_start(l->first, "kcsand_xbp", 0, true);
	if (!l->xbp || !l->xbp->started) {
		free(l->xbp);
		l->xbp = NULL;
		pr_warn("hot turns use uprobes on every thread: no thread to load their program\n");
	}
}

bool late_load__xbp_started(const struct late_load *l)
{
	return !l || l->xbp_tried;
}

void late_load__start_watch(struct late_load *l)
{
	if (l && !l->watch)	/* tried once */
		l->watch = job_start(l->first, "kcsand_hb_watch", LATE_WATCH_NICE, false);
}

/* Once, when j's load is over: true, with *prog its program, NULL (said) if it failed. */
static bool job_take(struct late_job *j, struct bpf_program **prog, const char *failed)
{
	if (!j || !j->started || j->taken ||
	    __atomic_load_n(&j->state, __ATOMIC_ACQUIRE) != JOB_DONE)
		return false;
	j->taken = true;
	if (j->err)
		pr_warn("%s: %s\n", failed, strerror(-j->err));
	*prog = j->err ? NULL : bpf_object__find_program_by_name(j->skel->obj, j->name);
	return true;
}

bool late_load__take(struct late_load *l, struct bpf_program **prog, double *trap_ns)
{
	if (!l || !job_take(l->xbp, prog, "hot turns use uprobes on every thread: cannot "
			    "load the execute breakpoint program"))
		return false;
	*trap_ns = l->xbp->trap_ns;
	return true;
}

bool late_load__take_watch(struct late_load *l, struct bpf_program **prog)
{
	return l && job_take(l->watch, prog,
			     "history: no watches of reads: cannot load their program");
}

/*
 * Done: unload what j loaded.  Still verifying (a short run ends while its
 * programs load): leave it to free itself, rather than make the run's end
 * wait for the verifier (0.1 to 0.4 s here, more at load); only its first
 * milliseconds, while it reads the first instance's maps, are waited for.
 */
static void job_free(struct late_job *j)
{
	int running = JOB_RUNNING;
	pthread_t t;

	if (!j)
		return;
	if (j->started) {
		while (!__atomic_load_n(&j->opened, __ATOMIC_ACQUIRE))
			usleep(1000);
		t = j->thread;
		if (__atomic_compare_exchange_n(&j->state, &running, JOB_LEFT, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			pthread_detach(t);
			return;
		}
		pthread_join(t, NULL);
	}
	job_destroy(j);
}

void late_load__free(struct late_load *l)
{
	if (!l)
		return;
	job_free(l->watch);
	job_free(l->xbp);
	free(l);
}

/* The program named name in skel, or NULL when it is not loaded there. */
static struct bpf_program *loaded_prog(struct kcsand_bpf *skel, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(skel->obj, name);

	return p && bpf_program__fd(p) >= 0 ? p : NULL;
}

int engine_late_skel(struct engine *e, const char *name, const char *what,
		     struct kcsand_bpf **out)
{
	struct kcsand_bpf *skel;
	uint64_t t0 = clock__now_ns();
	int err;

	*out = loaded_prog(e->skel, name) ? e->skel : NULL;
	for (size_t i = 0; !*out && i < e->nr_late_skels; i++)
		if (loaded_prog(e->late_skels[i], name))
			*out = e->late_skels[i];
	if (*out)
		return 0;
	if (e->nr_late_skels == ENGINE_LATE_SKELS)
		return -ENOSPC;
	err = load_only(e->skel, name, &skel);
	if (err) {
		kcsand_bpf__destroy(skel);
		pr_warn("cannot load %s for %s: %s\n", name, what, strerror(-err));
		return err;
	}
	e->late_skels[e->nr_late_skels++] = skel;
	*out = skel;
	pr_info("loaded %s for %s in %.1f ms\n", name, what, (clock__now_ns() - t0) / 1e6);
	return 0;
}

void engine_late_free(struct engine *e)
{
	for (size_t i = 0; i < e->nr_late_skels; i++)
		kcsand_bpf__destroy(e->late_skels[i]);
	e->nr_late_skels = 0;
}

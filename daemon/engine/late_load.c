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

struct late_load {
	struct kcsand_bpf *first, *skel;
	pthread_t thread;
	bool started, taken;
	int done;			/* atomic: kcsand_xbp's load is over */
	int err;
	double trap_ns;
	/*
	 * The history's watches' program, with_watch: on a thread of its own
	 * at a lower priority, so that hot turns do not wait for it.
	 */
	bool with_watch, watch_started, watch_taken;
	pthread_t watch_thread;
	struct kcsand_bpf *watch_skel;
	int watch_done;			/* atomic: that load is over */
	int watch_err;
};

/* A second instance of first, every map first's, with only the program named name loaded. */
static int load_only(struct kcsand_bpf *first, const char *name, struct kcsand_bpf **out)
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
	return kcsand_bpf__load(skel);
}

static int load_second(struct late_load *l)
{
	return load_only(l->first, "kcsand_xbp", &l->skel);
}

static void *run(void *arg)
{
	struct late_load *l = arg;

	l->err = load_second(l);
	if (!l->err)
		l->trap_ns = thread_turn__trap_ns(l->skel->progs.kcsand_xbp, sampler_calib_target,
						  LATE_CALIB_CALLS);
	__atomic_store_n(&l->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Nice 10: where CPUs are short, kcsand_xbp's verification goes first. */
static void *run_watch(void *arg)
{
	struct late_load *l = arg;

	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), LATE_WATCH_NICE);
	l->watch_err = load_only(l->first, "kcsand_hb_watch", &l->watch_skel);
	__atomic_store_n(&l->watch_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

int late_load__start(struct kcsand_bpf *skel, bool with_watch, struct late_load **out)
{
	struct late_load *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	l->first = skel;
	l->with_watch = with_watch;
	err = pthread_create(&l->thread, NULL, run, l);
	if (err) {
		free(l);
		return -err;
	}
	l->started = true;
	l->watch_started = with_watch && !pthread_create(&l->watch_thread, NULL, run_watch, l);
	*out = l;
	return 0;
}

bool late_load__take(struct late_load *l, struct bpf_program **prog, double *trap_ns)
{
	if (!l || l->taken || !__atomic_load_n(&l->done, __ATOMIC_ACQUIRE))
		return false;
	l->taken = true;
	if (l->err)
		pr_warn("hot turns use uprobes on every thread: cannot load the execute "
			"breakpoint program: %s\n", strerror(-l->err));
	*prog = l->err ? NULL : l->skel->progs.kcsand_xbp;
	*trap_ns = l->trap_ns;
	return true;
}

bool late_load__take_watch(struct late_load *l, struct bpf_program **prog)
{
	if (!l || !l->watch_started || l->watch_taken ||
	    !__atomic_load_n(&l->watch_done, __ATOMIC_ACQUIRE))
		return false;
	l->watch_taken = true;
	if (l->watch_err)
		pr_warn("history: no watches of reads: cannot load their program: %s\n",
			strerror(-l->watch_err));
	*prog = l->watch_err ? NULL : l->watch_skel->progs.kcsand_hb_watch;
	return true;
}

void late_load__free(struct late_load *l)
{
	if (!l)
		return;
	if (l->started)
		pthread_join(l->thread, NULL);
	if (l->watch_started)
		pthread_join(l->watch_thread, NULL);
	kcsand_bpf__destroy(l->watch_skel);
	kcsand_bpf__destroy(l->skel);
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

// SPDX-License-Identifier: GPL-2.0-only
/* Loading kcsand_xbp after the run starts: see late_load.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "late_load.h"
#include "kcsand.h"
#include "sampler/sampler.h"
#include "sampler/thread_turn.h"
#include "kcsand.skel.h"
#include "util/print.h"

#define LATE_CALIB_CALLS	500

struct late_load {
	struct kcsand_bpf *first, *skel;
	pthread_t thread;
	bool started, taken;
	int done;			/* atomic: the thread is over */
	int err;
	double trap_ns;
};

/* Every map of l->skel is the first instance's; only kcsand_xbp loads. */
static int load_second(struct late_load *l)
{
	struct bpf_program *p;
	struct bpf_map *m;
	int err;

	l->skel = kcsand_bpf__open();
	if (!l->skel)
		return -errno;
	bpf_object__for_each_map(m, l->skel->obj) {
		const struct bpf_map *f = bpf_object__find_map_by_name(l->first->obj,
								       bpf_map__name(m));

		if (!f || bpf_map__fd(f) < 0)
			return -ENOENT;
		err = bpf_map__reuse_fd(m, bpf_map__fd(f));
		if (err)
			return err;
	}
	bpf_object__for_each_program(p, l->skel->obj)
		bpf_program__set_autoload(p, p == l->skel->progs.kcsand_xbp);
	return kcsand_bpf__load(l->skel);
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

int late_load__start(struct kcsand_bpf *skel, struct late_load **out)
{
	struct late_load *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	l->first = skel;
	err = pthread_create(&l->thread, NULL, run, l);
	if (err) {
		free(l);
		return -err;
	}
	l->started = true;
	*out = l;
	return 0;
}

bool late_load__take(struct late_load *l, struct bpf_program **prog, double *trap_ns)
{
	if (!l || l->taken || !__atomic_load_n(&l->done, __ATOMIC_ACQUIRE))
		return false;
	pthread_join(l->thread, NULL);
	l->started = false;
	l->taken = true;
	if (l->err)
		pr_warn("hot turns use uprobes on every thread: cannot load the execute "
			"breakpoint program: %s\n", strerror(-l->err));
	*prog = l->err ? NULL : l->skel->progs.kcsand_xbp;
	*trap_ns = l->trap_ns;
	return true;
}

void late_load__free(struct late_load *l)
{
	if (!l)
		return;
	if (l->started)
		pthread_join(l->thread, NULL);
	kcsand_bpf__destroy(l->skel);
	free(l);
}

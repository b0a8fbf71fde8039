// SPDX-License-Identifier: GPL-2.0-only
/*
 * Arming for the site sampler: the armed set re-attached as a new link
 * (engine__rearm), and hot turns (engine__turn) on one thread by execute
 * breakpoints, else on a uprobe link of their own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "engine.h"
#include "engine_int.h"
#include "uprobe_multi.h"
#include "xturn.h"
#include "kcsand.skel.h"

/*
 * Replace the uprobe_multi link in *slot with one on the sites of eo set in
 * set[] (cookie-indexed), the new one in place before the old one goes.
 */
static int relink_multi(struct engine *e, struct eobj *eo, const uint8_t *set, int *slot)
{
	const struct target_obj *o = eo->obj;
	size_t n = 0;
	__u64 *offs = calloc(o->sites.n, sizeof(*offs));
	__u64 *cookies = calloc(o->sites.n, sizeof(*cookies));
	int fd = -1, err = 0;

	if (!offs || !cookies) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < o->sites.n; i++) {
		if (!set[eo->first + i])
			continue;
		offs[n] = probe_off(&o->sites.v[i]);
		cookies[n++] = eo->first + i;
	}
	/* No site armed: no link at all, an empty one is EINVAL. */
	if (n) {
		fd = uprobe_multi_attach(bpf_program__fd(e->skel->progs.kcsand_uprobe_multi),
					 o->path, offs, cookies, n, 0);
		if (fd < 0) {
			err = fd;
			fprintf(stderr, "kcsand: cannot re-attach %zu uprobes to %s: %s\n", n, o->path,
				strerror(-err));
			goto out;
		}
	}
	if (*slot >= 0)
		close(*slot);
	*slot = fd;
out:
	free(offs);
	free(cookies);
	return err;
}

static int rearm_per_site(struct engine *e, struct eobj *eo, const uint8_t *armed)
{
	const struct target_obj *o = eo->obj;

	for (size_t i = 0; i < eo->nr_links; i++) {
		bool want = armed[eo->first + i];

		if (!want && eo->links[i]) {
			bpf_link__destroy(eo->links[i]);
			eo->links[i] = NULL;
		} else if (want && !eo->links[i]) {
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = eo->first + i);

			eo->links[i] = bpf_program__attach_uprobe_opts(e->skel->progs.kcsand_uprobe,
								       -1, o->path,
								       probe_off(&o->sites.v[i]),
								       &uo);
			if (!eo->links[i])
				return -errno;
		}
	}
	return 0;
}

int engine__rearm(struct engine *e, const uint8_t *armed)
{
	int err = 0;

	for (size_t i = 0; i < e->nr_objs && !err; i++) {
		struct eobj *eo = &e->objs[i];

		if (!eo->attached || eo->removed)
			continue;
		err = e->multi ? relink_multi(e, eo, armed, &eo->link_fd) :
				 rearm_per_site(e, eo, armed);
	}
	return err;
}

/* A turn on one thread of each target process, by execute breakpoints (xturn.h). */
static int turn_xbp(struct engine *e, const uint8_t *turn)
{
	size_t got = 0;

	for (size_t i = 0; i < e->nr_objs; i++) {
		const struct eobj *eo = &e->objs[i];
		const struct target_obj *o = eo->obj;

		if (!eo->attached || eo->removed)
			continue;
		for (size_t k = 0; k < o->sites.n; k++) {
			int r;

			if (!turn[eo->first + k])
				continue;
			r = xturn__arm(e->xt, o->path, probe_off(&o->sites.v[k]), eo->first + k);
			if (e->opts.verbose >= 2) {
				const struct site *s = &o->sites.v[k];
				const struct elf_func *f = s->func < o->nr_funcs ? &o->funcs[s->func] :
										   NULL;

				fprintf(stderr, "kcsand: sampler: turn: %s+0x%llx: %d thread%s\n",
					f ? f->name : "?",
					(unsigned long long)(f ? s->vaddr - f->vaddr : 0), r,
					r == 1 ? "" : "s");
			}
			if (r <= 0) {
				xturn__disarm(e->xt);
				return r ? r : -ENOENT;
			}
			got++;
		}
	}
	return got ? 0 : -ENOENT;
}

int engine__turn(struct engine *e, const uint8_t *armed, const uint8_t *turn)
{
	uint8_t *both = NULL;
	int err = 0;

	if (e->xt)
		xturn__disarm(e->xt);
	if (turn && e->xt && !turn_xbp(e, turn))
		return 1;

	if (!e->multi) {
		/* Per-site links come and go one by one: the turn is the union. */
		both = malloc(e->nr_cookies ? e->nr_cookies : 1);
		if (!both)
			return -ENOMEM;
		for (size_t i = 0; i < e->nr_cookies; i++)
			both[i] = armed[i] || (turn && turn[i]);
	}
	for (size_t i = 0; i < e->nr_objs && !err; i++) {
		struct eobj *eo = &e->objs[i];

		if (!eo->attached || eo->removed)
			continue;
		if (!e->multi) {
			err = rearm_per_site(e, eo, both);
		} else if (turn) {
			err = relink_multi(e, eo, turn, &eo->turn_fd);
		} else if (eo->turn_fd >= 0) {
			close(eo->turn_fd);
			eo->turn_fd = -1;
		}
	}
	free(both);
	return err;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The probes after an object's locked releases, by file and offset, in the
 * history's hb_release_probes (bpf/history.bpf.h).  A locked RMW with no
 * probe ahead is released by the probe after it, when other CPUs can
 * already see its value; a thread that read that value and finds a race
 * with the releaser checks first whether the releaser is stopped at such a
 * probe (bpf/history_shadow.bpf.h, hb_inflight_now).  Known from the decode,
 * so that a thread's first release at a site counts as well as its later
 * ones (docs/history.md, "A locked release still in flight").
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine_int.h"
#include "kcsand.skel.h"
#include "util/print.h"

/* A site the probe after it releases (hb_marked()): a marked locked write, not relaxed. */
static bool releases_after(const struct kcsand_site *d)
{
	return d->probe_delta && (d->flags & KCSAND_SITE_WRITE) && (d->flags & KCSAND_SITE_MARKED) &&
	       !(d->flags & KCSAND_SITE_DATA_RACE) && d->order != KCSAND_ORDER_RELAXED &&
	       d->order != KCSAND_ORDER_ACQUIRE;
}

/* hb_obj_ino's entry of eo: the file a hit of one of its sites places (0: none). */
static void obj_ino(struct engine *e, const struct engine_object *eo, __u64 ino)
{
	__u32 obj = eo - e->objs;

	if (obj < KCSAND_HB_OBJS)
		bpf_map_update_elem(bpf_map__fd(e->skel->maps.hb_obj_ino), &obj, &ino, BPF_ANY);
}

void engine_place_sites(struct engine *e, struct engine_object *eo)
{
	size_t obj = eo - e->objs;
	struct target_obj *o = eo->obj;

	if (eo->kernel || obj >= KCSAND_HB_OBJS)
		return;
	for (size_t i = 0; i < o->sites.n; i++) {
		struct site *s = &o->sites.v[i];

		s->desc.obj = obj;
		s->desc.probe_off = probe_off(s) <= UINT32_MAX ? probe_off(s) : 0;
	}
}

void engine_note_release_probes(struct engine *e, struct engine_object *eo)
{
	const struct target_obj *o = eo->obj;
	int fd = bpf_map__fd(e->skel->maps.hb_release_probes);
	size_t added = 0;
	dev_t dev;
	ino_t ino;

	if (!e->hist || eo->kernel || target_obj__file_id(o, &dev, &ino))
		return;
	for (size_t i = 0; i < o->sites.n; i++) {
		const struct site *s = &o->sites.v[i];
		struct kcsand_probe_key k = { .ino = ino, .off = probe_off(s) };
		__u32 idx = eo->first + i;

		if (!releases_after(&s->desc))
			continue;
		if (bpf_map_update_elem(fd, &k, &idx, BPF_ANY)) {
			/* Not fatal: a full map leaves these as before, known after a first release. */
			pr_warn("%s: cannot note the probes after %s locked releases: %s\n", o->path,
				added ? "its other" : "its", strerror(errno));
			break;
		}
		added++;
	}
	eo->release_ino = added ? ino : 0;
	if (added) {
		obj_ino(e, eo, eo->release_ino);
		/* From now on a release may be in flight: keep acquires past a thread's last 4. */
		__atomic_store_n(&e->skel->bss->hb_late_possible, 1, __ATOMIC_SEQ_CST);
	}
	pr_debug("%s: %zu probes after locked releases noted\n", o->path, added);
}

void engine_forget_release_probes(struct engine *e, struct engine_object *eo)
{
	const struct target_obj *o = eo->obj;
	int fd;

	if (!eo->release_ino || !e->skel)
		return;
	fd = bpf_map__fd(e->skel->maps.hb_release_probes);
	for (size_t i = 0; i < o->sites.n; i++) {
		const struct site *s = &o->sites.v[i];
		struct kcsand_probe_key k = { .ino = eo->release_ino, .off = probe_off(s) };

		if (releases_after(&s->desc))
			bpf_map_delete_elem(fd, &k);
	}
	obj_ino(e, eo, 0);
	eo->release_ino = 0;
}

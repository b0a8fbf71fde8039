// SPDX-License-Identifier: GPL-2.0-only
/*
 * The uprobe links of an object's sites, made at attach and made again
 * for the site sampler: the armed set re-attached as a new link
 * (engine__rearm), and hot turns (engine__turn) on one thread by execute
 * breakpoints, else on a uprobe link of their own.  engine_sampler_ops
 * hands these, the live parameters and a trap calibration to the sampler.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine.h"
#include "engine_int.h"
#include "late_load.h"
#include "util/link_close.h"
#include "util/uprobe_multi.h"
#include "util/proc_maps.h"
#include "sampler/sampler.h"
#include "sampler/thread_turn.h"
#include "kcsand.skel.h"
#include "util/print.h"
#include "util/clock.h"

/*
 * A link that could not be made.  The sampler re-attaches every turn, and
 * a cause that stays (a site the kernel refuses, ENOTSUPP) would say the
 * same each time: once per object, then only with -v -v.
 */
static void link_failed(struct engine_object *eo, bool relink, size_t n, int err)
{
	const char *path = eo->obj->path;

	if (!relink) {
		pr_warn("cannot attach %zu uprobes to %s: %s\n", n, path, strerror(-err));
		return;
	}
	if (eo->relink_failed) {
		pr_debug("cannot re-attach %zu uprobes to %s: %s\n", n, path, strerror(-err));
		return;
	}
	eo->relink_failed = true;
	pr_warn("cannot re-attach %zu uprobes to %s: %s%s; its sites stay as they were armed\n",
		n, path, err == -524 ? "the kernel refuses a probe on one of its instructions" :
		strerror(-err), err == -524 ? " (ENOTSUPP)" : "");
}

/* A site's probes at most: its own and those ahead of a locked one. */
#define SITE_PROBES	(1 + SITE_AHEAD_MAX)

/* The cookie of a probe ahead of a locked site, delta bytes before it (include/kcsand.h). */
static __u64 ahead_cookie(size_t site, int32_t delta)
{
	return (__u64)site | KCSAND_COOKIE_AHEAD | (__u64)(uint32_t)delta << 32;
}

/*
 * Site i's probes into offs and cookies at n: its own, and with the history
 * those ahead of a locked RMW (struct site::ahead), which publish its
 * release before other CPUs can see what it wrote.  The new count.
 */
static size_t site_probes(const struct engine *e, const struct engine_object *eo, size_t i,
			  __u64 *offs, __u64 *cookies, size_t n)
{
	const struct site *s = &eo->obj->sites.v[i];

	offs[n] = probe_off(s);
	cookies[n++] = eo->first + i;
	for (int a = 0; e->hist && a < s->nr_ahead; a++) {
		offs[n] = s->file_off - s->ahead[a];
		cookies[n++] = ahead_cookie(eo->first + i, s->ahead[a]);
	}
	return n;
}

/* The sites of a set, as uprobe_multi's offsets and cookies (SITE_PROBES a site); how many. */
static size_t link_arrays(const struct engine *e, const struct engine_object *eo,
			  const uint8_t *set, __u64 *offs, __u64 *cookies)
{
	const struct target_obj *o = eo->obj;
	size_t n = 0;

	for (size_t i = 0; i < o->sites.n; i++) {
		if ((set && !set[eo->first + i]) || (eo->probe_refused && eo->probe_refused[i]))
			continue;
		n = site_probes(e, eo, i, offs, cookies, n);
	}
	return n;
}

/*
 * Which of n sites the kernel refuses a uprobe on, by halves: a link of
 * each half is made and closed, *tries bounding how many.  The refused
 * ones are left out of every later link.  How many were found.
 */
static size_t find_refused(int prog_fd, const char *path, struct engine_object *eo,
			   const __u64 *offs, const __u64 *cookies, size_t n, int *tries)
{
	int fd;

	if (!n || --*tries < 0)
		return 0;
	fd = uprobe_multi__attach(prog_fd, path, offs, cookies, n, 0);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (fd != -524)		/* ENOTSUPP: not a refusal, nothing to find */
		return 0;
	if (n == 1) {
		pr_info("%s: the kernel refuses a uprobe at +0x%llx: left out\n", eo->obj->path,
			(unsigned long long)offs[0]);
		eo->probe_refused[((__u32)cookies[0] & ~KCSAND_COOKIE_AHEAD) - eo->first] = 1;
		return 1;
	}
	return find_refused(prog_fd, path, eo, offs, cookies, n / 2, tries) +
	       find_refused(prog_fd, path, eo, offs + n / 2, cookies + n / 2, n - n / 2, tries);
}

/*
 * A re-attach the kernel refused (ENOTSUPP) although decoding left out the
 * instructions its tables refuse (sites/uprobe_refusal.c): find the sites
 * it refuses here, leave them out, and say so.  At most a few searches of
 * an object, of at most 400 links each: each costs a grace period.
 */
static size_t leave_out_refused(struct engine *e, struct engine_object *eo, const char *path,
				const __u64 *offs, const __u64 *cookies, size_t n)
{
	int tries = 400;
	size_t found;

	if (eo->refusal_searches >= 3)
		return 0;
	eo->refusal_searches++;
	if (!eo->probe_refused) {
		eo->probe_refused = calloc(eo->obj->sites.n, 1);
		if (!eo->probe_refused)
			return 0;
	}
	found = find_refused(bpf_program__fd(e->skel->progs.kcsand_uprobe_multi), path, eo, offs,
			     cookies, n, &tries);
	if (found)
		pr_warn("%s: the kernel refuses uprobes on %zu more of its sites (-v names them); "
			"they are left out\n", eo->obj->path, found);
	return found;
}

/*
 * A link made, or closed, while the ring buffer is drained.  Each uprobe
 * registered or unregistered costs tens of microseconds (the kernel's
 * register_for_each_vma() takes dup_mmap_sem for writing and writes the
 * breakpoint into every process that maps the object), and each link
 * released waits for a grace period, so a link of a few thousand sites
 * takes seconds on a busy machine, of stress-ng's 170,000 15 s; the
 * records that came meanwhile filled the ring, and memcached as a service
 * target lost 125 reports.  The links are made on a thread of their own
 * while this one takes the records into the queue, processed at the next
 * poll.  Below LINK_DRAIN_MIN sites it is not worth a thread.
 */
#define LINK_DRAIN_MIN	256

struct drained_job {
	void (*run)(void *arg);
	void *arg;
	int done;
};

static void *drained_thread(void *arg)
{
	struct drained_job *j = arg;

	j->run(j->arg);
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void run_drained(struct engine *e, void (*run)(void *), void *arg, size_t sites)
{
	struct drained_job j = { .run = run, .arg = arg };
	pthread_t t;

	if (!e->rb || sites < LINK_DRAIN_MIN || pthread_create(&t, NULL, drained_thread, &j)) {
		run(arg);
		return;
	}
	while (!__atomic_load_n(&j.done, __ATOMIC_ACQUIRE))
		ring_buffer__poll(e->rb, 20);
	pthread_join(t, NULL);
}

struct link_job {
	int prog_fd;
	const char *path;
	const __u64 *offs, *cookies;
	size_t n;
	int old_fd;		/* closed after the new link is made; -1: none */
	int fd;			/* the new link, or -errno */
};

static void link_job_run(void *arg)
{
	struct link_job *j = arg;

	j->fd = j->n ? uprobe_multi__attach(j->prog_fd, j->path, j->offs, j->cookies, j->n, 0) : -1;
	if (j->old_fd >= 0 && (j->fd >= 0 || !j->n))
		close(j->old_fd);
}

int engine_link_multi(struct engine *e, struct engine_object *eo, const uint8_t *set, int *slot)
{
	struct target_obj *o = eo->obj;
	struct link_job job = { .prog_fd = bpf_program__fd(e->skel->progs.kcsand_uprobe_multi) };
	char path[64];
	__u64 *offs = calloc(SITE_PROBES * o->sites.n, sizeof(*offs));
	__u64 *cookies = calloc(SITE_PROBES * o->sites.n, sizeof(*cookies));
	int err = 0;

	if (!offs || !cookies) {
		err = -ENOMEM;
		goto out;
	}
	job.n = link_arrays(e, eo, set, offs, cookies);
	/* No site armed: no link at all (an empty one is EINVAL), the old one closed. */
	if (job.n) {
		err = target_obj__attach_path(o, path, sizeof(path));
		if (err)
			goto out;
	}
	job.path = path;
	job.offs = offs;
	job.cookies = cookies;
	job.old_fd = *slot;
	run_drained(e, link_job_run, &job, job.n + (*slot >= 0 ? o->sites.n : 0));
	if (job.fd == -524 && set && leave_out_refused(e, eo, path, offs, cookies, job.n)) {
		job.n = link_arrays(e, eo, set, offs, cookies);
		run_drained(e, link_job_run, &job, job.n);
	}
	if (job.fd < 0 && job.n) {
		err = job.fd;
		link_failed(eo, set != NULL, job.n, err);
		goto out;
	}
	*slot = job.fd;
out:
	free(offs);
	free(cookies);
	return err;
}

/*
 * Chunks.  One link of an object's whole armed set had to be made again
 * whenever any site of it changed: on stress-ng (176,144 sites) the
 * sampler's every tick after the warm-up re-attached about 173,000 sites
 * to change a few hundred, 15 to 19 s each, with the target's forks held
 * on dup_mmap_sem meanwhile.  The hot sites that change are few and
 * clustered in a few functions, so links of ARM_CHUNK_MIN consecutive
 * sites make a re-arm cost the chunks that changed.  At most
 * ARM_CHUNKS_MAX links an object: each is a descriptor, and each closed
 * waits for a grace period (closed in parallel, util/link_close.h).
 */
#define ARM_CHUNK_MIN	256
#define ARM_CHUNKS_MAX	512

static int chunks_init(struct engine_object *eo)
{
	size_t n = eo->obj->sites.n;

	if (eo->chunk_fd)
		return 0;
	eo->chunk_sites = (n + ARM_CHUNKS_MAX - 1) / ARM_CHUNKS_MAX;
	if (eo->chunk_sites < ARM_CHUNK_MIN)
		eo->chunk_sites = ARM_CHUNK_MIN;
	eo->nr_chunks = (n + eo->chunk_sites - 1) / eo->chunk_sites;
	eo->chunk_fd = malloc(eo->nr_chunks * sizeof(*eo->chunk_fd));
	eo->linked = calloc(n ? n : 1, 1);
	if (!eo->chunk_fd || !eo->linked) {
		free(eo->chunk_fd);
		free(eo->linked);
		eo->chunk_fd = NULL;
		eo->linked = NULL;
		return -ENOMEM;
	}
	for (size_t c = 0; c < eo->nr_chunks; c++)
		eo->chunk_fd[c] = -1;
	return 0;
}

static bool site_wanted(const struct engine_object *eo, const uint8_t *set, size_t i)
{
	return (!set || set[eo->first + i]) && !(eo->probe_refused && eo->probe_refused[i]);
}

struct chunk_job {
	struct engine *e;
	struct engine_object *eo;
	const uint8_t *set;
	int prog_fd;
	char path[64];
	__u64 *offs, *cookies;	/* a chunk's, SITE_PROBES * chunk_sites each */
	struct link_close old;	/* the replaced links, closed together at the end */
	size_t chunks, sites;	/* made again, for -v -v */
	int err;		/* the first chunk that failed */
};

/* Chunk c's wanted sites on a new link, its old one into j->old; -errno: left as it was. */
static int chunk_relink(struct chunk_job *j, size_t c)
{
	struct engine_object *eo = j->eo;
	const struct target_obj *o = eo->obj;
	size_t lo = c * eo->chunk_sites, hi = lo + eo->chunk_sites, k = 0;
	int fd = -1;

	if (hi > o->sites.n)
		hi = o->sites.n;
	for (size_t i = lo; i < hi; i++) {
		if (site_wanted(eo, j->set, i))
			k = site_probes(j->e, eo, i, j->offs, j->cookies, k);
	}
	if (k) {
		fd = uprobe_multi__attach(j->prog_fd, j->path, j->offs, j->cookies, k, 0);
		/* Bounded: an object gets few searches (leave_out_refused). */
		if (fd == -524 && j->set &&
		    leave_out_refused(j->e, eo, j->path, j->offs, j->cookies, k))
			return chunk_relink(j, c);
		if (fd < 0) {
			link_failed(eo, j->set != NULL, k, fd);
			return fd;
		}
	}
	link_close__add(&j->old, &eo->chunk_fd[c]);
	eo->chunk_fd[c] = fd;
	for (size_t i = lo; i < hi; i++)
		eo->linked[i] = site_wanted(eo, j->set, i);
	j->chunks++;
	j->sites += k;
	return 0;
}

static bool chunk_changed(const struct engine_object *eo, const uint8_t *set, size_t c)
{
	size_t lo = c * eo->chunk_sites, hi = lo + eo->chunk_sites;

	for (size_t i = lo; i < hi && i < eo->obj->sites.n; i++)
		if (site_wanted(eo, set, i) != eo->linked[i])
			return true;
	return false;
}

static void chunks_run(void *arg)
{
	struct chunk_job *j = arg;

	for (size_t c = 0; c < j->eo->nr_chunks; c++) {
		int err = chunk_changed(j->eo, j->set, c) ? chunk_relink(j, c) : 0;

		if (err && !j->err)
			j->err = err;
		/* The first attach is all or nothing: the caller detaches the object. */
		if (err && !j->set)
			break;
	}
	link_close__all(&j->old);
}

int engine_link_chunks(struct engine *e, struct engine_object *eo, const uint8_t *set)
{
	struct target_obj *o = eo->obj;
	struct chunk_job j = { .e = e, .eo = eo, .set = set,
			       .prog_fd = bpf_program__fd(e->skel->progs.kcsand_uprobe_multi) };
	uint64_t t0 = clock__now_ns();
	int err = chunks_init(eo);

	if (!err)
		err = target_obj__attach_path(o, j.path, sizeof(j.path));
	if (err)
		return err;
	j.offs = calloc(SITE_PROBES * eo->chunk_sites, sizeof(*j.offs));
	j.cookies = calloc(SITE_PROBES * eo->chunk_sites, sizeof(*j.cookies));
	if (!j.offs || !j.cookies) {
		err = -ENOMEM;
		goto out;
	}
	run_drained(e, chunks_run, &j, o->sites.n);
	err = j.err;
	if (set)
		pr_debug("%s: re-armed %zu of %zu chunks, %zu sites, in %.1f ms\n", o->path,
			 j.chunks, eo->nr_chunks, j.sites, (clock__now_ns() - t0) / 1e6);
out:
	free(j.offs);
	free(j.cookies);
	return err;
}

/* Per-site link slot for a site's probe (*slot, NULL if it has none) made or removed. */
static int per_site_link(struct engine *e, struct engine_object *eo, struct bpf_link **slot,
			 const char *path, uint64_t off, __u64 cookie, bool want)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie);
	int err;

	if (!want && *slot) {
		bpf_link__destroy(*slot);
		*slot = NULL;
	}
	if (!want || *slot)
		return 0;
	*slot = bpf_program__attach_uprobe_opts(e->skel->progs.kcsand_uprobe, -1, path, off, &uo);
	if (*slot)
		return 0;
	err = -errno;
	pr_warn("cannot attach uprobe at %s+0x%llx: %s\n", eo->obj->path,
		(unsigned long long)off, strerror(-err));
	return err;
}

/* links[i] is site i's probe, links[(a + 1) * n + i] its a-th ahead (site_probes). */
int engine_link_per_site(struct engine *e, struct engine_object *eo, const uint8_t *set)
{
	struct target_obj *o = eo->obj;
	size_t n = o->sites.n;
	char path[64];
	int err = target_obj__attach_path(o, path, sizeof(path));

	if (err)
		return err;
	if (!eo->links) {
		eo->links = calloc(SITE_PROBES * n, sizeof(*eo->links));
		if (!eo->links)
			return -ENOMEM;
		eo->nr_links = SITE_PROBES * n;
	}
	for (size_t i = 0; i < n && !err; i++) {
		const struct site *s = &o->sites.v[i];
		bool want = !set || set[eo->first + i];

		err = per_site_link(e, eo, &eo->links[i], path, probe_off(s), eo->first + i, want);
		for (int a = 0; a < SITE_AHEAD_MAX && !err; a++)
			err = per_site_link(e, eo, &eo->links[(a + 1) * n + i], path,
					    s->file_off - s->ahead[a],
					    ahead_cookie(eo->first + i, s->ahead[a]),
					    want && e->hist && a < s->nr_ahead);
	}
	return err;
}

/*
 * The sites whose plain load or store was taken as atomic at run time
 * (bpf/atomics.bpf.h): sync sites learned, an `omp atomic read` or a
 * seq_cst load without debug info.
 */
static void add_learned_sites(struct engine *e, uint8_t *set)
{
	int fd = e->skel ? bpf_map__fd(e->skel->maps.learned_sites) : -1;
	__u32 key, next, *prev = NULL;

	while (fd >= 0 && !bpf_map_get_next_key(fd, prev, &next)) {
		if (next < e->nr_cookies)
			set[next] = 1;
		key = next;
		prev = &key;
	}
}

/*
 * The history's sync sites (marked accesses: lock, xchg, atomics, C++
 * guards, and those learned at run time) are never sampled one hit at a time while its sync probes are
 * on: a release or an acquire missed while the access it orders is armed
 * would make a false report.  They are off with the sync probes, whose
 * pause forgets the history.
 */
static void add_sync_sites(struct engine *e, uint8_t *set)
{
	if (!e->hist || e->sync_sites_off)
		return;
	for (size_t i = 0; i < e->nr_objs; i++) {
		const struct engine_object *eo = &e->objs[i];
		const struct target_obj *o = eo->obj;

		for (size_t k = 0; !eo->removed && k < o->sites.n; k++) {
			__u8 flags = o->sites.v[k].desc.flags;

			if ((flags & KCSAND_SITE_MARKED) && !(flags & KCSAND_SITE_DATA_RACE))
				set[eo->first + k] = 1;
		}
	}
	add_learned_sites(e, set);
}

/*
 * armed with the sync sites added, to free; NULL: armed as it is (or no
 * memory: then the history is paused, so that nothing is remembered unsoundly).
 */
static uint8_t *with_sync_sites(struct engine *e, const uint8_t *armed)
{
	uint8_t *set;

	if (!armed || !e->hist || e->sync_sites_off)
		return NULL;
	set = malloc(e->nr_cookies ? e->nr_cookies : 1);
	if (!set) {
		history__pause(e->hist);
		e->sync_sites_off = true;
		return NULL;
	}
	memcpy(set, armed, e->nr_cookies);
	add_sync_sites(e, set);
	return set;
}

/*
 * Keep the sampler's set, for engine_rearm_sync().  Without memory for it
 * the sync sites could not be armed again: the history is paused for good.
 */
static void keep_sampled(struct engine *e, const uint8_t *armed)
{
	uint8_t *copy = NULL;

	if (armed == e->sampled)
		return;
	if (armed && !(copy = malloc(e->nr_cookies ? e->nr_cookies : 1))) {
		if (e->hist)
			history__pause(e->hist);
		e->sync_sites_off = true;
		e->sampled_lost = true;
		return;
	}
	if (copy)
		memcpy(copy, armed, e->nr_cookies);
	free(e->sampled);
	e->sampled = copy;
}

/* Where atomic_learn_seq stands, read before the learned sites are (bpf/atomics.bpf.h). */
static __u64 learn_seq(const struct engine *e)
{
	return e->skel ? __atomic_load_n(&e->skel->bss->atomic_learn_seq, __ATOMIC_ACQUIRE) : 0;
}

/* The sites learned before seq are armed: threads stop acquiring their objects at each event. */
static void learn_armed(struct engine *e, __u64 seq)
{
	if (e->skel && seq > e->skel->bss->atomic_learn_armed)
		__atomic_store_n(&e->skel->bss->atomic_learn_armed, seq, __ATOMIC_RELEASE);
}

int engine__rearm(struct engine *e, const uint8_t *armed)
{
	__u64 seq = learn_seq(e);
	uint8_t *set;
	int err = 0;

	keep_sampled(e, armed);
	set = with_sync_sites(e, armed);
	if (set)
		armed = set;
	engine_drop_changed(e);
	for (size_t i = 0; i < e->nr_objs && !err; i++) {
		struct engine_object *eo = &e->objs[i];

		if (!eo->attached || eo->removed)
			continue;
		err = e->multi ? engine_link_chunks(e, eo, armed) :
				 engine_link_per_site(e, eo, armed);
	}
	/* Every site armed, or the learned ones with the sync sites. */
	if (!err && (!armed || set))
		learn_armed(e, seq);
	free(set);
	return err;
}

/*
 * Sites learned atomic since the last re-arm (bpf/atomics.bpf.h's ring)
 * are armed now, not at the sampler's next change: until then every event
 * of every thread acquires their objects.  With no sampler's set kept,
 * every site is armed already.
 */
void engine_arm_learned(struct engine *e)
{
	__u64 seq = learn_seq(e);

	if (!e->hist || !seq || seq == e->skel->bss->atomic_learn_armed)
		return;
	if (!e->sampled) {
		learn_armed(e, seq);
		return;
	}
	if (!e->sync_sites_off)
		engine__rearm(e, e->sampled);
}

int engine_rearm_sync(struct engine *e, bool on)
{
	if (e->sampled_lost)
		return -ENOMEM;
	e->sync_sites_off = !on;
	return e->sampled ? engine__rearm(e, e->sampled) : 0;
}

/* A turn on one thread of each target process, by execute breakpoints (thread_turn.h). */
static int turn_xbp(struct engine *e, const uint8_t *turn)
{
	size_t got = 0;

	for (size_t i = 0; i < e->nr_objs; i++) {
		const struct engine_object *eo = &e->objs[i];
		const struct target_obj *o = eo->obj;
		dev_t dev;
		ino_t ino;

		/* By inode: a new file at the same path is not the one decoded. */
		if (!eo->attached || eo->removed || target_obj__file_id(o, &dev, &ino))
			continue;
		for (size_t k = 0; k < o->sites.n; k++) {
			int r;

			if (!turn[eo->first + k])
				continue;
			r = thread_turn__arm(e->tt, dev, ino, probe_off(&o->sites.v[k]),
					     eo->first + k);
			if (kcsand__print_level_on(KCSAND_DEBUG)) {
				const struct site *s = &o->sites.v[k];
				const struct elf_func *f = target_obj__site_func(o, s);

				pr_debug("sampler: turn: %s+0x%llx: %d thread%s\n",
					f ? f->name : "?",
					(unsigned long long)(f ? s->vaddr - f->vaddr : 0), r,
					r == 1 ? "" : "s");
			}
			if (r <= 0) {
				thread_turn__disarm(e->tt);
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

	if (e->tt)
		thread_turn__disarm(e->tt);
	engine_drop_changed(e);
	if (turn)
		late_load__start_xbp(e->late);	/* once; until it is loaded, uprobe links */
	if (turn && e->tt && !turn_xbp(e, turn))
		return 1;

	if (!e->multi) {
		/* Per-site links come and go one by one: the turn is the union. */
		both = malloc(e->nr_cookies ? e->nr_cookies : 1);
		if (!both)
			return -ENOMEM;
		for (size_t i = 0; i < e->nr_cookies; i++)
			both[i] = armed[i] || (turn && turn[i]);
		add_sync_sites(e, both);
	}
	for (size_t i = 0; i < e->nr_objs && !err; i++) {
		struct engine_object *eo = &e->objs[i];

		if (!eo->attached || eo->removed)
			continue;
		if (!e->multi) {
			err = engine_link_per_site(e, eo, both);
		} else if (turn) {
			err = engine_link_multi(e, eo, turn, &eo->turn_fd);
		} else if (eo->turn_fd >= 0) {
			close(eo->turn_fd);
			eo->turn_fd = -1;
		}
	}
	free(both);
	return err;
}

struct self_offset {
	uint64_t addr;
	char *path;
	size_t len;
	__u64 *off;
};

static int self_offset_in(const struct proc_map *m, void *arg)
{
	struct self_offset *so = arg;

	if (so->addr < m->start || so->addr >= m->end || !proc_map__file(m))
		return 0;
	snprintf(so->path, so->len, "%s", m->path);
	*so->off = so->addr - m->start + m->pgoff;
	return 1;
}

/* File offset of a function of this program, from /proc/self/maps. */
static int self_file_offset(const void *fn, char *path, size_t len, __u64 *off)
{
	struct self_offset so = { (uint64_t)(uintptr_t)fn, path, len, off };
	int ret = proc_maps__for_each(0, self_offset_in, &so);

	return ret < 0 ? ret : ret ? 0 : -ENOENT;
}

/* Batches of a trap calibration (clock__least_cpu_ns()). */
#define TRAP_BATCHES	10

/*
 * The cost of one trap: time calls of fn, a function of our own, probed
 * the way sites are, against unprobed calls.  Our own process is not a
 * target, so the program returns at its first test: this is the trap, the
 * part the BPF side cannot time.
 */
static double engine_trap_ns(struct engine *e, void (*fn)(void), int calls)
{
	__u64 off, cookie = ~0u;
	struct bpf_link *link = NULL;
	double probed, unprobed;
	char path[4096];
	int fd = -1;

	if (self_file_offset((const void *)fn, path, sizeof(path), &off))
		return 0;
	/* Unprobed first: the probed calls' link then goes without waiting for its close. */
	unprobed = clock__least_cpu_ns(fn, calls, TRAP_BATCHES);
	if (e->multi) {
		fd = uprobe_multi__attach(bpf_program__fd(e->skel->progs.kcsand_uprobe_multi), path,
					  &off, &cookie, 1, getpid());
	} else {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie);

		link = bpf_program__attach_uprobe_opts(e->skel->progs.kcsand_uprobe, getpid(), path,
						       off, &uo);
	}
	if (fd < 0 && !link)
		return 0;
	probed = clock__least_cpu_ns(fn, calls, TRAP_BATCHES);
	link_close__start(&e->calib_close, fd);
	bpf_link__destroy(link);
	return probed - unprobed;
}

/*
 * overhead_budget is one budget for every probe of a run.  With the history
 * detector on, its sync probes (pace.c) spend half of it and the sampled
 * sites the other half; each spending all of it made a run cost about
 * twice the budget (docs/PERFORMANCE.md, "The cold start's credit, one
 * budget, and start-up").  100% arms and traces everything.
 */
double engine_share_pct(const struct engine *e)
{
	double b = e->opts.params.v[PARAM_OVERHEAD_BUDGET];

	return b >= 100 || !e->hist ? b : b / 2;
}

/* The engine as the site sampler sees it (sampler.h): struct sampler_ops. */
static size_t ops_nr_sites(void *ctx)
{
	return engine__nr_cookies(ctx);
}

static void ops_get_params(void *ctx, struct sampler_params *p)
{
	const unsigned int *v = ((struct engine *)ctx)->opts.params.v;

	p->budget = engine_share_pct(ctx);
	p->warmup_cpu_ms = v[PARAM_SAMPLER_WARMUP_CPU_MS];
	p->period_ms = v[PARAM_SAMPLER_PERIOD_MS];
	p->turn_ms = v[PARAM_SAMPLER_TURN_MS];
	p->backoff_hits = v[PARAM_SAMPLER_BACKOFF_HITS];
	p->level0_cpu_ms = v[PARAM_SAMPLER_LEVEL0_CPU_MS];
	p->start_credit_ms = v[PARAM_SAMPLER_START_CREDIT_MS];
}

static int ops_rearm(void *ctx, const uint8_t *armed)
{
	return engine__rearm(ctx, armed);
}

static int ops_turn(void *ctx, const uint8_t *armed, const uint8_t *turn)
{
	return engine__turn(ctx, armed, turn);
}

static double ops_trap_ns(void *ctx, void (*fn)(void), int calls)
{
	return engine_trap_ns(ctx, fn, calls);
}

static double ops_other_probes_ns(void *ctx)
{
	return engine_sync_cost_ns(ctx);
}

const struct sampler_ops engine_sampler_ops = {
	.nr_sites = ops_nr_sites,
	.get_params = ops_get_params,
	.rearm = ops_rearm,
	.turn = ops_turn,
	.trap_ns = ops_trap_ns,
	.other_probes_ns = ops_other_probes_ns,
};

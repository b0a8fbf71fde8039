// SPDX-License-Identifier: GPL-2.0-only
/*
 * Marking verdicts of kernel sites, cached per debug file build-id.  See
 * kcache.h.
 *
 * The file: a header (magic, format, _text in the debug file, count), then
 * the verdicts sorted by pc, each a struct kcache_entry.  It is read whole
 * and searched in memory; added verdicts are merged in when it is saved.
 * A source tree's cache (marks-BUILDID-src-HASH, HASH that of the tree's
 * real path) ends with the source files its verdicts read: a count, then
 * for each its size, its modification time in ns, its path's length and
 * the path, sorted by path.  A verdict cannot say which file decided it
 * cheaply, so one changed file empties the whole cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "kcache.h"
#include "sites/elf_symbols.h"
#include "util/array.h"
#include "util/file.h"
#include "util/print.h"

#define KCACHE_MAGIC	"KCSANDMV"
/* Change it whenever marking's rules change what they decide. */
#define KCACHE_FORMAT	3

struct kcache_header {
	char magic[8];
	uint32_t format;
	uint32_t has_text;
	uint64_t text;
	uint64_t n;
};

struct kcache_entry {
	uint64_t pc;
	struct kcache_verdict v;
};

/* A source file the verdicts were decided from, as it was when read. */
struct kcache_source {
	char *path;
	uint64_t size;
	int64_t mtime_ns;
};

struct kcache {
	char *path;
	struct kcache_header h;
	struct kcache_entry *e;		/* n sorted entries: the file's, then merged */
	struct kcache_entry *added;	/* unsorted, since the load */
	size_t n, cap_e, nr_added, cap_added;
	uint64_t hits;
	bool dirty;
	bool by_source;			/* a source tree's cache: sources[] follow the verdicts */
	bool sources_lost;		/* one could not be kept: the verdicts are not written */
	struct kcache_source *sources;	/* sorted by path once loaded or saved */
	size_t nr_sources, cap_sources;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct kcache_entry *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* The verdicts dropped: a source they were decided from changed, or the file is cut short. */
static void forget(struct kcache *c)
{
	for (size_t i = 0; i < c->nr_sources; i++)
		free(c->sources[i].path);
	c->nr_sources = 0;
	c->n = 0;
	c->h.n = 0;
}

/* The source list that ends a source tree's cache file; -EIO when cut short. */
static int load_sources(struct kcache *c, FILE *f)
{
	uint64_t n;

	if (fread(&n, sizeof(n), 1, f) != 1 || n > (1u << 24))
		return -EIO;
	for (uint64_t i = 0; i < n; i++) {
		struct kcache_source s = {};
		uint32_t len;

		if (fread(&s.size, sizeof(s.size), 1, f) != 1 ||
		    fread(&s.mtime_ns, sizeof(s.mtime_ns), 1, f) != 1 ||
		    fread(&len, sizeof(len), 1, f) != 1 || len >= 4096)
			return -EIO;
		s.path = calloc(1, len + 1);
		if (!s.path || fread(s.path, 1, len, f) != len ||
		    ARRAY_RESERVE(c->sources, c->cap_sources, c->nr_sources, 256)) {
			free(s.path);
			return -EIO;
		}
		c->sources[c->nr_sources++] = s;
	}
	return 0;
}

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* Whether every source the verdicts were decided from is as it was; says which is not. */
static bool sources_unchanged(const struct kcache *c)
{
	for (size_t i = 0; i < c->nr_sources; i++) {
		const struct kcache_source *s = &c->sources[i];
		struct stat st;

		if (stat(s->path, &st) || (uint64_t)st.st_size != s->size ||
		    mtime_ns(&st) != s->mtime_ns) {
			pr_info("[kernel]: %s changed since the marking cache %s was written: "
				"marking from the DWARF again\n", s->path, c->path);
			return false;
		}
	}
	return true;
}

/* Read the file's verdicts; a missing or foreign file leaves the cache empty. */
static void load(struct kcache *c)
{
	FILE *f = fopen(c->path, "rbe");
	struct kcache_header h;

	if (!f)
		return;
	if (fread(&h, sizeof(h), 1, f) == 1 && !memcmp(h.magic, KCACHE_MAGIC, 8) &&
	    h.format == KCACHE_FORMAT && h.n < (1u << 26)) {
		c->e = malloc(h.n ? h.n * sizeof(*c->e) : 1);
		if (c->e && fread(c->e, sizeof(*c->e), h.n, f) == h.n) {
			c->h = h;
			c->n = c->cap_e = h.n;
		} else {
			free(c->e);
			c->e = NULL;
		}
	}
	if (c->by_source && (load_sources(c, f) || !sources_unchanged(c)))
		forget(c);
	fclose(f);
}

/* The part of the cache's name that says which source tree: its real path's FNV-1a hash. */
static int source_key(const char *source_dir, char *out, size_t len)
{
	char *real = realpath(source_dir, NULL);
	uint64_t h = 0xcbf29ce484222325ull;

	if (!real)
		return -errno;
	for (const char *p = real; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	free(real);
	snprintf(out, len, "-src-%016llx", (unsigned long long)h);
	return 0;
}

struct kcache *kcache__open(const char *path, const char *source_dir)
{
	struct kcache *c = calloc(1, sizeof(*c));
	char id[128], tree[32] = "";

	if (c && source_dir && *source_dir) {
		c->by_source = true;
		if (source_key(source_dir, tree, sizeof(tree))) {
			free(c);
			return NULL;
		}
	}
	if (!c || elf_file__build_id_hex(path, id, sizeof(id)) ||
	    asprintf(&c->path, "%s/marks-%s%s.v%d", file__cache_dir(), id, tree, KCACHE_FORMAT) < 0) {
		free(c);
		return NULL;
	}
	memcpy(c->h.magic, KCACHE_MAGIC, 8);
	c->h.format = KCACHE_FORMAT;
	load(c);
	return c;
}

bool kcache__text(const struct kcache *c, uint64_t *text)
{
	*text = c->h.text;
	return c->h.has_text;
}

void kcache__set_text(struct kcache *c, uint64_t text)
{
	if (c->h.has_text && c->h.text == text)
		return;
	c->h.text = text;
	c->h.has_text = 1;
	c->dirty = true;
}

bool kcache__get(struct kcache *c, uint64_t pc, struct kcache_verdict *v)
{
	struct kcache_entry key = { .pc = pc };
	const struct kcache_entry *e = c->n ? bsearch(&key, c->e, c->n, sizeof(*c->e), cmp_entry)
					   : NULL;

	if (!e)
		return false;
	*v = e->v;
	c->hits++;
	return true;
}

bool kcache__has(const struct kcache *c, uint64_t pc)
{
	struct kcache_entry key = { .pc = pc };

	return c->n && bsearch(&key, c->e, c->n, sizeof(*c->e), cmp_entry);
}

void kcache__put(struct kcache *c, uint64_t pc, const struct kcache_verdict *v)
{
	if (ARRAY_RESERVE(c->added, c->cap_added, c->nr_added, 1024))
		return;		/* a verdict not kept is decided again next time */
	c->added[c->nr_added++] = (struct kcache_entry){ .pc = pc, .v = *v };
	c->dirty = true;
}

void kcache__add_source(struct kcache *c, const char *path, uint64_t size, int64_t mtime_ns)
{
	struct kcache_source *s;

	if (!c->by_source)
		return;
	if (ARRAY_RESERVE(c->sources, c->cap_sources, c->nr_sources, 256))
		goto lost;
	s = &c->sources[c->nr_sources];
	*s = (struct kcache_source){ strdup(path), size, mtime_ns };
	if (!s->path)
		goto lost;
	c->nr_sources++;
	c->dirty = true;
	return;
lost:
	/* Not kept, its verdicts could outlive a change: keep none. */
	c->sources_lost = true;
}

uint64_t kcache__hits(const struct kcache *c)
{
	return c->hits;
}

/* The file's verdicts and the added ones in one sorted array, one per pc. */
static int merge(struct kcache *c)
{
	size_t n = 0;

	if (ARRAY_RESERVE_MORE(c->e, c->cap_e, c->n, c->nr_added, c->n + c->nr_added))
		return -ENOMEM;
	if (c->nr_added)
		memcpy(c->e + c->n, c->added, c->nr_added * sizeof(*c->e));
	c->n += c->nr_added;
	c->nr_added = 0;
	qsort(c->e, c->n, sizeof(*c->e), cmp_entry);
	for (size_t i = 0; i < c->n; i++)
		if (!n || c->e[n - 1].pc != c->e[i].pc)
			c->e[n++] = c->e[i];
	c->n = n;
	c->h.n = n;
	return 0;
}

static int cmp_source(const void *a, const void *b)
{
	return strcmp(((const struct kcache_source *)a)->path,
		      ((const struct kcache_source *)b)->path);
}

/* The sources, one per path, after the verdicts. */
static int save_sources(struct kcache *c, FILE *f)
{
	size_t n = 0;
	uint64_t count;

	qsort(c->sources, c->nr_sources, sizeof(*c->sources), cmp_source);
	for (size_t i = 0; i < c->nr_sources; i++) {
		if (n && !strcmp(c->sources[n - 1].path, c->sources[i].path)) {
			free(c->sources[i].path);
			continue;
		}
		c->sources[n++] = c->sources[i];
	}
	c->nr_sources = n;
	count = n;
	if (fwrite(&count, sizeof(count), 1, f) != 1)
		return -EIO;
	for (size_t i = 0; i < n; i++) {
		const struct kcache_source *s = &c->sources[i];
		uint32_t len = strlen(s->path);

		if (fwrite(&s->size, sizeof(s->size), 1, f) != 1 ||
		    fwrite(&s->mtime_ns, sizeof(s->mtime_ns), 1, f) != 1 ||
		    fwrite(&len, sizeof(len), 1, f) != 1 || fwrite(s->path, 1, len, f) != len)
			return -EIO;
	}
	return 0;
}

int kcache__save(struct kcache *c)
{
	char tmp[4200];
	FILE *f;
	int err;

	if (!c->dirty)
		return 0;
	if (c->sources_lost)
		return -ENOMEM;
	err = merge(c);
	if (err)
		return err;
	mkdir(file__cache_dir(), 0755);
	snprintf(tmp, sizeof(tmp), "%s.%d", c->path, (int)getpid());
	f = fopen(tmp, "wbe");
	if (!f)
		return -errno;
	if (fwrite(&c->h, sizeof(c->h), 1, f) != 1 ||
	    fwrite(c->e, sizeof(*c->e), c->n, f) != c->n ||
	    (c->by_source && save_sources(c, f)))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, c->path))
		err = -errno;
	if (err)
		unlink(tmp);
	else
		c->dirty = false;
	return err;
}

const char *kcache__path(const struct kcache *c)
{
	return c->path;
}

void kcache__free(struct kcache *c)
{
	if (!c)
		return;
	forget(c);
	free(c->sources);
	free(c->path);
	free(c->e);
	free(c->added);
	free(c);
}

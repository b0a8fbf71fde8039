// SPDX-License-Identifier: GPL-2.0-only
/*
 * Marking verdicts of kernel sites, cached per debug file build-id.  See
 * kcache.h.
 *
 * The file: a header (magic, format, _text in the debug file, count), then
 * the verdicts sorted by pc, each a struct kcache_entry.  It is read whole
 * and searched in memory; added verdicts are merged in when it is saved.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <sys/stat.h>
#include "kcache.h"
#include "sites/elf_symbols.h"
#include "util/array.h"

#define KCACHE_MAGIC	"KCSANDMV"
/* Change it whenever marking's rules change what they decide. */
#define KCACHE_FORMAT	2

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

struct kcache {
	char *path;
	struct kcache_header h;
	struct kcache_entry *e;		/* n sorted entries: the file's, then merged */
	struct kcache_entry *added;	/* unsorted, since the load */
	size_t n, nr_added, cap_added;
	uint64_t hits;
	bool dirty;
};

/* The debug file's build-id as hex in out; -errno, -ENODATA when it has none. */
static int build_id_hex(const char *path, char *out, size_t len)
{
	const unsigned char *id;
	struct elf_file ef;
	ssize_t n;
	int err = elf_file__open(path, ELF_C_READ_MMAP, &ef);

	if (err)
		return err == -ENOEXEC ? -ENODATA : err;
	err = -ENODATA;
	n = dwelf_elf_gnu_build_id(ef.elf, (const void **)&id);
	if (n > 0 && (size_t)n * 2 < len) {
		for (ssize_t i = 0; i < n; i++)
			snprintf(out + 2 * i, 3, "%02x", id[i]);
		err = 0;
	}
	elf_file__close(&ef);
	return err;
}

static const char *cache_dir(void)
{
	const char *d = getenv("KCSAND_CACHE_DIR");

	return d && *d ? d : "/var/cache/kcsand";
}

static int cmp_entry(const void *a, const void *b)
{
	const struct kcache_entry *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
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
			c->n = h.n;
		} else {
			free(c->e);
			c->e = NULL;
		}
	}
	fclose(f);
}

struct kcache *kcache__open(const char *path)
{
	struct kcache *c = calloc(1, sizeof(*c));
	char id[128];

	if (!c || build_id_hex(path, id, sizeof(id)) ||
	    asprintf(&c->path, "%s/marks-%s.v%d", cache_dir(), id, KCACHE_FORMAT) < 0) {
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

uint64_t kcache__hits(const struct kcache *c)
{
	return c->hits;
}

/* The file's verdicts and the added ones in one sorted array, one per pc. */
static int merge(struct kcache *c)
{
	struct kcache_entry *all = realloc(c->e, (c->n + c->nr_added + 1) * sizeof(*all));
	size_t n = 0;

	if (!all)
		return -ENOMEM;
	memcpy(all + c->n, c->added, c->nr_added * sizeof(*all));
	c->e = all;
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

int kcache__save(struct kcache *c)
{
	char tmp[4200];
	FILE *f;
	int err;

	if (!c->dirty)
		return 0;
	err = merge(c);
	if (err)
		return err;
	mkdir(cache_dir(), 0755);
	snprintf(tmp, sizeof(tmp), "%s.%d", c->path, (int)getpid());
	f = fopen(tmp, "wbe");
	if (!f)
		return -errno;
	if (fwrite(&c->h, sizeof(c->h), 1, f) != 1 ||
	    fwrite(c->e, sizeof(*c->e), c->n, f) != c->n)
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
	free(c->path);
	free(c->e);
	free(c->added);
	free(c);
}

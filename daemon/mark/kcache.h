/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Marking verdicts of kernel sites, cached per debug file build-id.
 *
 * Marking a large kernel site set reads a large part of the vmlinux's DWARF
 * (633 MB for Debian's 6.1): minutes for src:fs/ in the test guest, over 9p.
 * The verdict of a site depends only on the kernel build (its debug file),
 * the instruction and kcsand's rules, so it is kept in a file named after
 * the debug file's build-id, under $KCSAND_CACHE_DIR or /var/cache/kcsand,
 * and the next run over the same kernel reads its verdicts from there; the
 * DWARF is opened only for sites the cache does not have.  Runs with a
 * marks file do not use it: the file can change between runs without the
 * kernel changing.  Runs with --source-dir (the source rule reads the
 * kernel's sources) have a cache of their own per source tree, which also
 * keeps the size and modification time of every source file its verdicts
 * read: when one of them has changed or gone, the cache starts empty.
 */
#ifndef KCSAND_KCACHE_H
#define KCSAND_KCACHE_H

#include <stdbool.h>
#include <stdint.h>

/* What marking did to a site: flags it set and cleared, its reason. */
struct kcache_verdict {
	uint32_t set;
	uint32_t clear;
	uint32_t reason;
	uint32_t no_source;	/* 1: its source file could not be read */
};

struct kcache;

/*
 * The cache of the debug file path, for marking with the sources under
 * source_dir (NULL or "": without), an empty one when there is none yet or
 * a source file it read has changed since; NULL when the file has no
 * build-id, source_dir does not exist, or memory ran out.
 */
struct kcache *kcache__open(const char *path, const char *source_dir);
/* The debug file's _text, as stored with the verdicts; false if not known yet. */
bool kcache__text(const struct kcache *c, uint64_t *text);
void kcache__set_text(struct kcache *c, uint64_t text);
/* The verdict of the site at pc (an address in the debug file); false if none. */
bool kcache__get(struct kcache *c, uint64_t pc, struct kcache_verdict *v);
/* Whether the site at pc has a verdict, not counted as a hit. */
bool kcache__has(const struct kcache *c, uint64_t pc);
void kcache__put(struct kcache *c, uint64_t pc, const struct kcache_verdict *v);
/*
 * A source file the added verdicts were decided from (a source_dir cache only:
 * checked by the next kcache__open()), as it was when read.
 */
void kcache__add_source(struct kcache *c, const char *path, uint64_t size, int64_t mtime_ns);
/* How many verdicts kcache__get() found. */
uint64_t kcache__hits(const struct kcache *c);
/*
 * Write the verdicts back when some were added (atomically: a new file
 * renamed over the old).  0, or -errno when the directory is not writable.
 */
int kcache__save(struct kcache *c);
/* Where the cache file is (or would be). */
const char *kcache__path(const struct kcache *c);
void kcache__free(struct kcache *c);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Marking: which sites are marked accesses (READ_ONCE, atomics, ...) although
 * they compile to plain movs.  Decoding already marks lock-prefixed and xchg
 * sites; mark__apply() adds, in this order of precedence:
 *
 *	marks file		the user's explicit word (FUNC, FUNC+0xOFF, FILE:LINE)
 *	inline accessor		the site lies in an (inlined) atomic/once accessor (DWARF)
 *	qualifier		the site's static target is an _Atomic or volatile object (DWARF)
 *	source macro		the source at the site's line:column is a marker (DWARF + source)
 *
 * A data_race verdict (marks file or source) always wins: the site is then
 * never watched and never reported.  docs/marking.md has the whole story;
 * the rule tables live in tables.c, one table per rule.
 */
#ifndef KCSAND_MARK_H
#define KCSAND_MARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sites/decode.h"

enum mark_kind {
	MARK_KIND_PLAIN = 0,
	MARK_KIND_MARKED,
	MARK_KIND_DATA_RACE,	/* marked, and never reported */
};

/* ---- inline accessor rule */

/*
 * Is a function with this qualified name ("atomic_read",
 * "std::__atomic_base<int>::load") an accessor whose accesses are marked?
 * Kernel accessors count only where inlined (an out-of-line atomic_* is an
 * ordinary function); C++ atomics' members also out of line (-O0).
 * Returns the table entry's prefix that matched, or NULL.
 */
const char *mark__accessor_match(const char *qualified_name, bool inlined);
/*
 * Is name a device-memory accessor (readl, iowrite32, __raw_writeq ...)?
 * Their sites are never watched (MARK_IO_ACCESSOR): re-reading MMIO to
 * compare values has side effects.  The matching table entry, or NULL.
 */
const char *mark__io_accessor_match(const char *name, bool inlined);

/* ---- source rule */

/* A source file split into lines; lines[0] is line 1. */
struct mark_src {
	char *buf;
	char **lines;
	int nr_lines;
	char *path;			/* mark_src__load's: where it was read */
	uint64_t size;			/* and its size and modification time (ns) then */
	int64_t mtime_ns;
};

/* Split text (copied) into lines; NULL on allocation failure. */
struct mark_src *mark_src__from_string(const char *text);
/* Read a source file; NULL when it cannot be read as text (util/file.h), or is no regular file. */
struct mark_src *mark_src__load(const char *path);
void mark_src__free(struct mark_src *src);

/*
 * What the source says about an access at line:col (1-based; col 0 when
 * DWARF has no column).  With a column, the access is marked when the
 * column lies inside a marker's call, "MARKER(" up to its closing
 * parenthesis, possibly over several lines.  Without one, or when the
 * column points at a brace or past the end of the line (gcc's way of
 * saying "somewhere in this statement"), any marker call spanning the line
 * marks it.  data_race wins over the other markers.  *token (may be NULL)
 * gets the marker as written ("atomic_load_explicit"), valid until the
 * next call in this thread, or NULL when the access is plain.
 */
enum mark_kind mark_src__at(const struct mark_src *src, int line, int col, const char **token);
/* Does the column say which expression it is (not 0, a brace or past the end of the line)? */
bool mark_src__col_informative(const struct mark_src *src, int line, int col);
/*
 * The memory order the statement at line names (memory_order_relaxed,
 * __ATOMIC_RELEASE ...; the line and the next ones up to its ';'), as an
 * enum kcsand_order; KCSAND_ORDER_DEFAULT when none or several differ.
 */
int mark_src__order(const struct mark_src *src, int line);
/*
 * The line under an OpenMP `#pragma omp atomic` (read, write, update or
 * capture; gcc compiles read and write to plain movs): the order its
 * clauses name (enum kcsand_order; none named: KCSAND_ORDER_DEFAULT), or
 * -1 when the line above is no such pragma.  A relaxed one is a release
 * when a `#pragma omp flush` comes just before it, an acquire when one
 * comes just after (both: KCSAND_ORDER_DEFAULT).
 */
int mark_src__omp_atomic(const struct mark_src *src, int line);
/*
 * Is the line an OpenMP pragma with a reduction clause?  gcc combines each
 * thread's part into the shared variable there, with a relaxed atomic RMW
 * (a `lock add`, or a `lock cmpxchg` loop) or inside GOMP_atomic_start/end;
 * what orders the result is the construct's barrier or the team's end.
 */
bool mark_src__omp_reduction(const struct mark_src *src, int line);
/* Does the line hold the identifier word (not as part of a longer one)? */
bool mark_src__has_word(const struct mark_src *src, int line, const char *word);
/*
 * The line is a plain assignment: an `=` of its own, and no word that may
 * say atomic or ordered (atomic, volatile, once, sync, fence, barrier,
 * acquire, release, relaxed, seq_cst, lock, in any case), nor an OpenMP
 * atomic pragma before it.
 */
bool mark_src__plain_assignment(const struct mark_src *src, int line);

/* ---- marks file */

struct mark_rules;

/*
 * Parse a marks file: one entry per line, "SPEC KIND" with SPEC one of
 * FUNC, FUNC+0xOFF or FILE:LINE and KIND "marked" or "data_race"; '#'
 * starts a comment.  A bad line is reported with pr_warn as
 * "kcsand: NAME:LINE: why" and fails the whole parse with -EINVAL.
 */
int mark_rules__parse(const char *name, const char *text, struct mark_rules **out);
int mark_rules__load(const char *path, struct mark_rules **out);
void mark_rules__free(struct mark_rules *r);
size_t mark_rules__count(const struct mark_rules *r);

/*
 * The verdict of the rules for a site in function func at offset off, at
 * file:line (file NULL or line 0 when unknown).  A FILE entry matches a path
 * that equals it or ends in "/FILE".
 */
enum mark_kind mark_rules__match(const struct mark_rules *r, const char *func, uint64_t off,
				 const char *file, int line);

/* ---- applying the rules to an object's sites */

struct mark_opts {
	const char *source_dir;		/* where to look for sources first, or NULL */
	const struct mark_rules *rules;	/* marks file, or NULL */
};

/* What mark__apply did, beyond each site's reason. */
struct mark_stats {
	bool dwarf;			/* debug info was found */
	uint64_t no_source;		/* sites whose source file could not be read */
};

/*
 * The rules on one site, for objects whose debug info is not the object
 * itself (kernel code: sites at runtime addresses, DWARF in a vmlinux or
 * .ko).  An opened debug file; addresses "in the file" are those that
 * mark_debug__sym() returns (libdwfl's module addresses: the link-time
 * address for a vmlinux, libdwfl's own section layout for a .ko).
 */
struct mark_debug;

/* Open path's DWARF (or its build-id/debuglink file): -ENOEXEC not ELF, -ENODATA no DWARF. */
int mark_debug__open(const char *path, const struct mark_opts *opts, struct mark_debug **out);
void mark_debug__close(struct mark_debug *d);
/* A symbol's address in the file (func: STT_FUNC only) and size; -ENOENT, -ENOMEM. */
int mark_debug__sym(struct mark_debug *d, const char *name, bool func, uint64_t *addr,
		    uint64_t *size);
/* Each source file the rules have read for d's sites so far (a cache keeps them: kcache.h). */
void mark_debug__sources(struct mark_debug *d, void (*fn)(void *ctx, const struct mark_src *src),
			 void *ctx);

/* Where a site is, for the rules. */
struct mark_where {
	const char *func;		/* function name (marks file), or NULL */
	uint64_t off;			/* offset in it */
	struct mark_debug *dbg;		/* debug file, or NULL: marks file FUNC entries only */
	bool has_pc;			/* pc is known */
	uint64_t pc;			/* the instruction's address in dbg */
	uint64_t target;		/* its static target's address in dbg, or 0 */
	bool pointers;			/* the qualifier rule through pointers too (user objects) */
};

/* Start obj's sites again from the instructions' own reasons (lock prefix, xchg). */
void mark__reset(struct target_obj *obj);
/* Apply the rules to one site (after mark__reset); counts what is missing in stats. */
void mark__site(struct site *s, const struct mark_where *w, const struct mark_opts *opts,
		struct mark_stats *stats);
/* obj->stats.marked from the sites' flags. */
void mark__update_stats(struct target_obj *obj);
/* The address a site accesses when known before run time (RIP-relative, absolute), or 0. */
uint64_t mark__static_target(const struct site *s);

/*
 * Mark obj's decoded sites (KCSAND_SITE_MARKED, KCSAND_SITE_DATA_RACE and
 * site->reason) and update obj->stats.marked.  Without DWARF, only the
 * marks file's FUNC and FUNC+0xOFF entries apply.  Each call starts again
 * from the instructions' own reasons (site->insn_reason), so it can be run
 * again with other rules.  Returns 0 or -errno.
 */
int mark__apply(struct target_obj *obj, const struct mark_opts *opts, struct mark_stats *stats);

/* Count the sites marked by each reason (counts[MARK_REASON_COUNT]), and the data_race ones. */
void mark__count(const struct site *sites, size_t n, uint64_t *counts, uint64_t *data_race);

#endif

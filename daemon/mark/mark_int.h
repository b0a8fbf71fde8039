/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Private to marking (mark.c, tables.c, src.c, dwarf.c):
 * the source rule's marker table entries, and the opened debug file that
 * mark__site() asks for the inline-accessor and qualifier rules and for
 * the source line of a site.
 */
#ifndef KCSAND_MARK_INT_H
#define KCSAND_MARK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "mark.h"

/* ---- source markers (the table in tables.c, the scanner in src.c) */

#define SRC_PREFIX	(1u << 0)	/* any identifier starting with the name */
#define SRC_METHOD	(1u << 1)	/* a member call: after '.' or '->' */
#define SRC_FIRST_ARG	(1u << 2)	/* only the first argument is the marked access */

struct src_marker {
	const char *name;
	enum mark_kind kind;
	unsigned int flags;
};

/* The marker that identifier id (len bytes; method: after '.' or '->') names, or NULL. */
const struct src_marker *mark_find_marker(const char *id, size_t len, bool method);

/* ---- debug info (dwarf.c) */

struct src_cache;
struct name_cache;
struct gvar;
struct sym_index;
struct pointee_ctx;

/*
 * An opened debug file (struct mark_debug in mark.h).  Addresses "in the
 * file" are libdwfl's module addresses: the link-time vaddr plus elfbias
 * for an executable or shared object, libdwfl's own section layout for a
 * relocatable .ko.  DWARF addresses are those minus dwbias.
 */
struct dw_ctx {
	const struct mark_opts *opts;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf *dw;
	Dwarf_Addr elfbias;		/* module address - link-time vaddr */
	Dwarf_Addr dwbias;		/* module address - DWARF address */
	struct gvar *vars;
	size_t nr_vars;
	Dwarf_Die *decls;		/* extern declarations of a volatile/_Atomic type */
	size_t nr_decls, cap_decls;
	Dwarf_Die fn;			/* the function whose inline tree inl and seq hold */
	bool fn_valid;
	Dwarf_Off cu_off;		/* the unit whose functions cu_fns holds, or 0 */
	struct fn_range *cu_fns;	/* its top-level functions' ranges, in DIE order */
	size_t nr_cu_fns, cap_cu_fns;
	struct inl_range *inl;		/* its inlined instances' ranges */
	size_t nr_inl, cap_inl;
	struct seq_span *seq;		/* its seqcount helpers */
	size_t nr_seq, cap_seq;
	bool vars_loaded;
	struct name_cache *names;	/* open addressing, cap_names a power of two */
	size_t nr_names, cap_names;
	struct src_cache *srcs;
	struct sym_index *syms;		/* by-name index, built on the first mark_debug__sym() */
	struct pointee_ctx *pointee;	/* the pointer rule's (pointee.c), or NULL */
};

/* One address range of a compile unit's top-level function. */
struct fn_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
};

/* One address range of an inlined instance in a function, and how deep it is nested. */
struct inl_range {
	Dwarf_Addr lo, hi;
	int depth;
	Dwarf_Die die;
};

/* An inlined seqcount helper in a function (dwarf.c's seqcount rule). */
struct seq_span {
	Dwarf_Addr lo, hi;		/* its lowest and highest address */
	int edge;			/* which helper: a section's begin or end */
	const char *name;
};

/* One row of the line table: where an instruction came from. */
struct src_row {
	const char *file;
	int line, col;
};

/*
 * Inline accessor rule at pc in cu: the accessor's qualified name (also in
 * *fn), or NULL; *io set when it is a device-memory accessor.
 */
const char *mark_rule_accessor(struct dw_ctx *c, Dwarf_Die *cu, Dwarf_Addr pc, const char **fn,
			  bool *io);
/*
 * Seqcount rule at pc in cu: the helper that begins the seqcount read or
 * write section pc lies in (KCSAN takes its accesses as atomic), or NULL.
 */
const char *mark_rule_seqcount(struct dw_ctx *c, Dwarf_Die *cu, Dwarf_Addr pc);
/* Qualifier rule for a static target (module address): "volatile NAME" in buf, or NULL. */
const char *mark_rule_qualifier(struct dw_ctx *c, uint64_t target, char *buf, size_t len);
/* The DIE of d's DW_AT_type (through abstract origins) in *t: 0, or -1 when it has none. */
int mark_dw_type_of(Dwarf_Die *d, Dwarf_Die *t);
/* "_Atomic" or "volatile" when the object of this type at byte off is so qualified, or NULL. */
const char *mark_type_qual_at(Dwarf_Die *type, uint64_t off);
/* The concrete function of cu that has pc, in *fn; false when none. */
bool mark_dw_function_at(struct dw_ctx *c, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *fn);
/*
 * Qualifier rule through a pointer (pointee.c): the access disp(base) at pc,
 * whose base register holds a pointer variable whose pointee is qualified
 * at disp: "_Atomic NAME->+DISP" in buf, or NULL.
 */
const char *mark_rule_pointee(struct dw_ctx *c, Dwarf_Die *cu, Dwarf_Addr pc,
			      const struct kcsand_site *d, char *buf, size_t len);
void mark_pointee__free(struct dw_ctx *c);
/* The source file for a DWARF path, read once and cached in c; NULL when it cannot be read. */
struct mark_src *mark_source_get(struct dw_ctx *c, const char *path);
/*
 * The line-table rows of the instruction at pc (DWARF address), its own
 * first; how many were stored in rows[max].
 */
int mark_site_rows(Dwarf_Die *cu, Dwarf_Addr pc, struct src_row *rows, int max);

#endif

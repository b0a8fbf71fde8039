// SPDX-License-Identifier: GPL-2.0-only
/*
 * Debug info for marking (struct mark_debug in mark.h): an object's DWARF
 * opened through libdwfl, and what the rules ask of it: the qualified name
 * of the (inlined) function at an address, the qualifiers of a static
 * variable's type at an offset, and the source line of an instruction with
 * the source file itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

#include "mark_int.h"
#include "sites/debuginfo.h"
#include "sites/symindex.h"
#include "util/array.h"

struct src_cache {
	struct src_cache *next;
	char *path;
	struct mark_src *src;	/* NULL: not found */
};

struct name_cache {
	Dwarf_Off off;
	char *name;		/* qualified name, or NULL when none */
};

struct gvar {
	uint64_t addr, size;
	Dwarf_Die die;
};

/* Open the object's DWARF, here or in its separate debug file (sites/debuginfo.h). */
static int dw_open(struct dw_ctx *c, const char *path)
{
	Dwarf_Addr elfbias, dwbias;
	Dwfl_Module *mod;

	c->dwfl = dwfl_begin(debuginfo__offline_callbacks());
	if (!c->dwfl)
		return -ENOMEM;
	dwfl_report_begin(c->dwfl);
	mod = dwfl_report_offline(c->dwfl, path, path, -1);
	if (dwfl_report_end(c->dwfl, NULL, NULL) != 0 || !mod)
		return -ENOEXEC;
	if (!dwfl_module_getelf(mod, &elfbias))
		return -ENOEXEC;
	c->mod = mod;
	c->elfbias = elfbias;
	c->dw = dwfl_module_getdwarf(mod, &dwbias);
	if (!c->dw)
		return -ENODATA;
	c->dwbias = dwbias;
	return 0;
}

static void dw_close(struct dw_ctx *c)
{
	while (c->srcs) {
		struct src_cache *s = c->srcs;

		c->srcs = s->next;
		mark_src__free(s->src);
		free(s->path);
		free(s);
	}
	for (size_t i = 0; i < c->cap_names; i++)
		free(c->names[i].name);
	free(c->names);
	free(c->vars);
	free(c->decls);
	free(c->seq);
	free(c->inl);
	free(c->cu_fns);
	sym_index__free(c->syms);
	mark_pointee__free(c);
	if (c->dwfl)
		dwfl_end(c->dwfl);
}

/* The declaration behind an inlined instance or an out-of-line definition. */
static void decl_die(Dwarf_Die *d)
{
	Dwarf_Attribute a;
	Dwarf_Die t;

	for (int i = 0; i < 8; i++) {
		if ((dwarf_attr(d, DW_AT_abstract_origin, &a) ||
		     dwarf_attr(d, DW_AT_specification, &a)) && dwarf_formref_die(&a, &t)) {
			*d = t;
			continue;
		}
		break;
	}
}

/*
 * Can a function of d's compile unit sit inside a namespace or class?  Not in
 * C or assembly: there the name is the whole answer, and dwarf_getscopes_die(),
 * which walks the unit from its root to d, is skipped.  It was four fifths of
 * a vmlinux's marking (bench/kernel/p15-kmark-cost.sh).
 */
static bool lang_has_scopes(Dwarf_Die *d)
{
	Dwarf_Die cu;

	if (!dwarf_diecu(d, &cu, NULL, NULL))
		return true;
	switch (dwarf_srclang(&cu)) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
	case DW_LANG_Mips_Assembler:
		return false;
	default:
		return true;
	}
}

/* "ns::class<T>::name" from the DIE's enclosing namespaces and classes. */
static char *build_qualified_name(Dwarf_Die *d)
{
	const char *name = dwarf_diename(d);
	Dwarf_Die *scopes = NULL;
	char buf[1024];
	size_t len = 0;
	int n;

	if (!name)
		return NULL;
	if (!lang_has_scopes(d))
		return strdup(name);
	buf[0] = '\0';
	n = dwarf_getscopes_die(d, &scopes);
	for (int i = n - 1; i >= 1; i--) {
		int tag = dwarf_tag(&scopes[i]);
		const char *sn;

		if (tag != DW_TAG_namespace && tag != DW_TAG_class_type &&
		    tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
			continue;
		sn = dwarf_diename(&scopes[i]);
		len += snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0, "%s::",
				sn ? sn : "(anonymous namespace)");
	}
	free(scopes);
	if (len < sizeof(buf))
		snprintf(buf + len, sizeof(buf) - len, "%s", name);
	return strdup(buf);
}

/* The qualified name of a function DIE, cached by its declaration's offset. */
static const char *qualified_name(struct dw_ctx *c, Dwarf_Die *die)
{
	Dwarf_Die d = *die;
	Dwarf_Off off;
	size_t bucket;

	decl_die(&d);
	off = dwarf_dieoffset(&d);
	if (c->nr_names * 2 >= c->cap_names) {
		size_t cap = c->cap_names ? c->cap_names * 2 : 256;
		struct name_cache *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (size_t i = 0; i < c->cap_names; i++) {
			if (!c->names[i].off)
				continue;
			bucket = (c->names[i].off * 0x9E3779B97F4A7C15ull) & (cap - 1);
			while (v[bucket].off)
				bucket = (bucket + 1) & (cap - 1);
			v[bucket] = c->names[i];
		}
		free(c->names);
		c->names = v;
		c->cap_names = cap;
	}
	bucket = (off * 0x9E3779B97F4A7C15ull) & (c->cap_names - 1);
	while (c->names[bucket].off) {
		if (c->names[bucket].off == off)
			return c->names[bucket].name;
		bucket = (bucket + 1) & (c->cap_names - 1);
	}
	c->names[bucket].off = off;	/* a DIE's offset is never 0: the CU header is there */
	c->names[bucket].name = build_qualified_name(&d);
	c->nr_names++;
	return c->names[bucket].name;
}

/* The accessor rule by dwarf_getscopes(), for a pc outside the CU's top-level functions. */
static const char *accessor_by_scopes(struct dw_ctx *c, Dwarf_Die *cu, Dwarf_Addr pc,
				      const char **fn, bool *io)
{
	Dwarf_Die *scopes = NULL;
	const char *hit = NULL;
	int n = dwarf_getscopes(cu, pc, &scopes);

	for (int i = 0; i < n && !hit; i++) {
		int tag = dwarf_tag(&scopes[i]);
		bool inlined;
		const char *name;

		if (tag == DW_TAG_inlined_subroutine)
			inlined = true;
		else if (tag == DW_TAG_subprogram)
			inlined = dwarf_hasattr(&scopes[i], DW_AT_inline);
		else
			continue;
		name = qualified_name(c, &scopes[i]);
		if (mark__io_accessor_match(name, inlined)) {
			hit = name;
			*fn = name;
			*io = true;
		} else if (mark__accessor_match(name, inlined)) {
			hit = name;
			*fn = name;
		}
		/* The concrete out-of-line function ends the chain of inlined ones. */
		if (!inlined)
			break;
	}
	free(scopes);
	return hit;
}

/* ------------------------------------------------------------ seqcount sections */

/*
 * KCSAN takes every access between read_seqcount_begin() and
 * read_seqcount_retry() as atomic (kcsan_atomic_next(), linux/seqlock.h), and
 * those between write_seqcount_begin() and write_seqcount_end() too
 * (kcsan_nestable_atomic_begin()): the section's reads may see a torn
 * update by design, and retry.  The helpers are inline functions, so a
 * function's DWARF inline tree shows where each section starts and ends.
 */
static const char *const seq_read_begin[] = { "read_seqcount_begin", "read_seqbegin",
					      "do_raw_read_seqcount", "read_seqcount_latch" };
static const char *const seq_read_end[] = { "read_seqcount_retry", "read_seqretry",
					    "read_seqcount_latch_retry" };
static const char *const seq_write_begin[] = { "write_seqcount_begin", "write_seqlock" };
static const char *const seq_write_end[] = { "write_seqcount_end", "write_sequnlock" };

enum seq_edge { SEQ_NONE, SEQ_READ_BEGIN, SEQ_READ_END, SEQ_WRITE_BEGIN, SEQ_WRITE_END };

static bool name_has(const char *name, const char *const *subs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strstr(name, subs[i]))
			return true;
	return false;
}

/*
 * In 6.1 read_seqcount_begin() is a macro: what is inlined of it is the
 * counter's read, __seqprop_sequence() or __seqprop_LOCKNAME_sequence().
 * Ends first: read_seqcount_latch_retry names a begin too.
 */
static enum seq_edge seq_edge_of(const char *name)
{
	size_t len = name ? strlen(name) : 0;

	if (!name)
		return SEQ_NONE;
	if (name_has(name, seq_read_end, sizeof(seq_read_end) / sizeof(*seq_read_end)))
		return SEQ_READ_END;
	if (name_has(name, seq_read_begin, sizeof(seq_read_begin) / sizeof(*seq_read_begin)) ||
	    (!strncmp(name, "__seqprop_", 10) && len >= 18 && !strcmp(name + len - 8, "sequence")))
		return SEQ_READ_BEGIN;
	if (name_has(name, seq_write_begin, sizeof(seq_write_begin) / sizeof(*seq_write_begin)))
		return SEQ_WRITE_BEGIN;
	if (name_has(name, seq_write_end, sizeof(seq_write_end) / sizeof(*seq_write_end)))
		return SEQ_WRITE_END;
	return SEQ_NONE;
}

/* Instance inst (depth: its nesting) as the function's inline tree: each range, and a seqcount edge. */
static int add_inlined(struct dw_ctx *c, Dwarf_Die *inst, int depth)
{
	const char *name = qualified_name(c, inst);
	enum seq_edge e = seq_edge_of(name);
	Dwarf_Addr base, lo, hi, min = (Dwarf_Addr)-1, max = 0;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(inst, off, &base, &lo, &hi)) > 0) {
		if (ARRAY_RESERVE(c->inl, c->cap_inl, c->nr_inl, 64))
			return -ENOMEM;
		c->inl[c->nr_inl++] = (struct inl_range){ .lo = lo, .hi = hi, .depth = depth,
							  .die = *inst };
		min = lo < min ? lo : min;
		max = hi > max ? hi : max;
	}
	if (e == SEQ_NONE || max <= min)
		return 0;
	if (ARRAY_RESERVE(c->seq, c->cap_seq, c->nr_seq, 8))
		return -ENOMEM;
	c->seq[c->nr_seq++] = (struct seq_span){ .lo = min, .hi = max, .edge = e, .name = name };
	return 0;
}

/* Every inlined instance under parent, at any depth (lexical blocks are looked into). */
static int collect_inlined(struct dw_ctx *c, Dwarf_Die *parent, int depth)
{
	Dwarf_Die d;

	if (depth > 32 || dwarf_child(parent, &d))
		return 0;
	do {
		int tag = dwarf_tag(&d);

		if (tag == DW_TAG_inlined_subroutine && add_inlined(c, &d, depth))
			return -ENOMEM;
		if ((tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) &&
		    collect_inlined(c, &d, depth + 1))
			return -ENOMEM;
	} while (dwarf_siblingof(&d, &d) == 0);
	return 0;
}

/*
 * The ranges of cu's top-level functions, in c->cu_fns.  A unit's top
 * level is mostly types: walking it for each function was half of a
 * vmlinux's marking once the names were quick; it is walked once per unit
 * the sites enter now.
 */
static int cu_functions(struct dw_ctx *c, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	Dwarf_Die fn;

	if (c->cu_off == off)
		return 0;
	c->cu_off = 0;
	c->nr_cu_fns = 0;
	if (dwarf_child(cu, &fn) == 0) {
		do {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t r = 0;

			if (dwarf_tag(&fn) != DW_TAG_subprogram)
				continue;
			while ((r = dwarf_ranges(&fn, r, &base, &lo, &hi)) > 0) {
				if (ARRAY_RESERVE(c->cu_fns, c->cap_cu_fns, c->nr_cu_fns, 64))
					return -ENOMEM;
				c->cu_fns[c->nr_cu_fns++] =
					(struct fn_range){ .lo = lo, .hi = hi, .die = fn };
			}
		} while (dwarf_siblingof(&fn, &fn) == 0);
	}
	c->cu_off = off;
	return 0;
}

/* The concrete function of cu that has pc (the first in DIE order), in *fn; false when none. */
static bool function_at(struct dw_ctx *c, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *fn)
{
	if (cu_functions(c, cu))
		return false;
	for (size_t i = 0; i < c->nr_cu_fns; i++) {
		if (pc >= c->cu_fns[i].lo && pc < c->cu_fns[i].hi) {
			*fn = c->cu_fns[i].die;
			return true;
		}
	}
	return false;
}

bool mark_dw_function_at(struct dw_ctx *c, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *fn)
{
	return function_at(c, cu, pc, fn);
}

/*
 * pc in a section of the function: after a begin helper's start and before
 * the end of the first matching end helper that starts after it.
 */
static const char *seq_section_at(const struct dw_ctx *c, Dwarf_Addr pc)
{
	for (size_t i = 0; i < c->nr_seq; i++) {
		const struct seq_span *b = &c->seq[i];
		const struct seq_span *end = NULL;
		int want = b->edge == SEQ_READ_BEGIN ? SEQ_READ_END : SEQ_WRITE_END;

		if ((b->edge != SEQ_READ_BEGIN && b->edge != SEQ_WRITE_BEGIN) || pc < b->lo)
			continue;
		for (size_t j = 0; j < c->nr_seq; j++) {
			const struct seq_span *e = &c->seq[j];

			if (e->edge == want && e->lo > b->lo && (!end || e->lo < end->lo))
				end = e;
		}
		if (end && pc < end->hi)
			return b->name;
	}
	return NULL;
}

/*
 * The concrete function of cu that has pc, with its inline tree and
 * seqcount sections (c->fn, inl, seq).  Sites come function by function:
 * the tree is walked once per function, where dwarf_getscopes() walks the
 * whole CU for each site (two thirds of marking's time on the vmlinux).
 */
static bool function_load(struct dw_ctx *c, Dwarf_Die *cu, Dwarf_Addr pc)
{
	Dwarf_Die fn;

	if (c->fn_valid && dwarf_haspc(&c->fn, pc) > 0)
		return true;
	c->nr_seq = c->nr_inl = 0;
	c->fn_valid = function_at(c, cu, pc, &fn);
	if (!c->fn_valid)
		return false;
	c->fn = fn;
	if (collect_inlined(c, &fn, 0))
		c->fn_valid = false;
	return c->fn_valid;
}

/* Seqcount rule: the section's begin helper when pc is inside one, or NULL. */
const char *mark_rule_seqcount(struct dw_ctx *c, Dwarf_Die *cu, Dwarf_Addr pc)
{
	return function_load(c, cu, pc) ? seq_section_at(c, pc) : NULL;
}

int mark_dw_type_of(Dwarf_Die *d, Dwarf_Die *t)
{
	Dwarf_Attribute a;

	if (!dwarf_attr_integrate(d, DW_AT_type, &a) || !dwarf_formref_die(&a, t))
		return -1;
	return 0;
}

/* "_Atomic" or "volatile" when the object of this type at byte off is so qualified. */
static const char *type_qual_at(Dwarf_Die *type, uint64_t off, int depth)
{
	Dwarf_Die t = *type, next;
	Dwarf_Word sz;

	for (int i = 0; i < 64 && depth < 16; i++) {
		switch (dwarf_tag(&t)) {
		case DW_TAG_atomic_type:
			return "_Atomic";
		case DW_TAG_volatile_type:
			return "volatile";
		case DW_TAG_typedef:
		case DW_TAG_const_type:
		case DW_TAG_restrict_type:
			if (mark_dw_type_of(&t, &next))
				return NULL;
			t = next;
			break;
		case DW_TAG_array_type:
			if (mark_dw_type_of(&t, &next))
				return NULL;
			if (dwarf_aggregate_size(&next, &sz) == 0 && sz)
				off %= sz;
			t = next;
			break;
		case DW_TAG_structure_type:
		case DW_TAG_class_type:
		case DW_TAG_union_type: {
			Dwarf_Die m, mt;

			if (dwarf_child(&t, &m))
				return NULL;
			do {
				Dwarf_Attribute a;
				Dwarf_Word moff = 0;
				const char *q;

				if (dwarf_tag(&m) != DW_TAG_member || mark_dw_type_of(&m, &mt))
					continue;
				if (dwarf_attr(&m, DW_AT_data_member_location, &a) &&
				    dwarf_formudata(&a, &moff))
					continue;
				if (dwarf_aggregate_size(&mt, &sz) || off < moff ||
				    off >= moff + sz)
					continue;
				q = type_qual_at(&mt, off - moff, depth + 1);
				if (q)
					return q;
			} while (dwarf_siblingof(&m, &m) == 0);
			return NULL;
		}
		default:
			return NULL;
		}
	}
	return NULL;
}

const char *mark_type_qual_at(Dwarf_Die *type, uint64_t off)
{
	return type_qual_at(type, off, 0);
}

/*
 * An extern declaration whose type is volatile or _Atomic, kept by name
 * (once) to be found in the symbol table: the kernel's jiffies is declared
 * "volatile unsigned long" but defined by the linker script at jiffies_64,
 * whose own DWARF (a plain u64) is all the variables' list would hold.
 */
static int push_decl(struct dw_ctx *c, Dwarf_Die *d)
{
	const char *name = dwarf_diename(d);
	Dwarf_Die t;

	if (!name || !dwarf_hasattr(d, DW_AT_declaration) || mark_dw_type_of(d, &t) ||
	    !type_qual_at(&t, 0, 0))
		return 0;
	for (size_t i = 0; i < c->nr_decls; i++)
		if (!strcmp(dwarf_diename(&c->decls[i]), name))
			return 0;
	if (ARRAY_RESERVE(c->decls, c->cap_decls, c->nr_decls, 16))
		return -ENOMEM;
	c->decls[c->nr_decls++] = *d;
	return 0;
}

static int push_var(struct dw_ctx *c, size_t *cap, Dwarf_Die *d)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t nops;
	Dwarf_Die t;
	Dwarf_Word sz = 1;

	if (!dwarf_attr(d, DW_AT_location, &a))
		return push_decl(c, d);
	if (dwarf_getlocation(&a, &ops, &nops) || nops != 1 || ops[0].atom != DW_OP_addr)
		return 0;
	if (!mark_dw_type_of(d, &t) && dwarf_aggregate_size(&t, &sz))
		sz = 1;
	if (ARRAY_RESERVE(c->vars, *cap, c->nr_vars, 256))
		return -ENOMEM;
	c->vars[c->nr_vars++] = (struct gvar){ .addr = ops[0].number, .size = sz ? sz : 1,
					       .die = *d };
	return 0;
}

/* Every variable with a static address in the tree under d (globals, statics in functions). */
static int collect_vars(struct dw_ctx *c, size_t *cap, Dwarf_Die *parent, int depth)
{
	Dwarf_Die d;
	int err;

	if (depth > 64 || dwarf_child(parent, &d))
		return 0;
	do {
		switch (dwarf_tag(&d)) {
		case DW_TAG_variable:
			err = push_var(c, cap, &d);
			if (err)
				return err;
			break;
		case DW_TAG_subprogram:
		case DW_TAG_lexical_block:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_namespace:
		case DW_TAG_module:
			err = collect_vars(c, cap, &d, depth + 1);
			if (err)
				return err;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&d, &d) == 0);
	return 0;
}

static int cmp_var(const void *a, const void *b)
{
	const struct gvar *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * The qualified declarations as variables at their symbols' addresses, with
 * the declared type: a linker-defined alias (jiffies) then marks like a
 * variable whose own DWARF says volatile.
 */
static int add_decl_vars(struct dw_ctx *c, size_t *cap)
{
	if (!c->nr_decls)
		return 0;
	if (!c->syms) {
		c->syms = sym_index__build(c->mod);
		if (!c->syms)
			return -ENOMEM;
	}
	for (size_t i = 0; i < c->nr_decls; i++) {
		Dwarf_Die *d = &c->decls[i], t;
		uint64_t addr, size = 0;
		Dwarf_Word sz;

		if (sym_index__find(c->syms, dwarf_diename(d), false, true, &addr, &size))
			continue;
		if (!mark_dw_type_of(d, &t) && !dwarf_aggregate_size(&t, &sz) && sz)
			size = sz;
		if (ARRAY_RESERVE(c->vars, *cap, c->nr_vars, 256))
			return -ENOMEM;
		c->vars[c->nr_vars++] = (struct gvar){ .addr = addr - c->dwbias,
						       .size = size ? size : 1, .die = *d };
	}
	return 0;
}

static int load_vars(struct dw_ctx *c)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;
	const char *main_file = NULL, *debug_file = NULL;
	int err;

	c->vars_loaded = true;
	/*
	 * The walk reads every unit, whatever the number of sites: the file's
	 * DWARF in one sequential pass first (sites/debuginfo.h; over 9p the
	 * page faults fetch it a little at a time).
	 */
	dwfl_module_info(c->mod, NULL, NULL, NULL, NULL, NULL, &main_file, &debug_file);
	if (debug_file || main_file)
		debuginfo__prefetch(debug_file ? debug_file : main_file);
	while (dwarf_nextcu(c->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(c->dw, off + hsize, &cu)) {
			err = collect_vars(c, &cap, &cu, 0);
			if (err)
				return err;
		}
		off = next;
	}
	err = add_decl_vars(c, &cap);
	if (err)
		return err;
	qsort(c->vars, c->nr_vars, sizeof(*c->vars), cmp_var);
	return 0;
}

/* Qualifier rule for a static target (module address): "volatile NAME" in buf, or NULL. */
const char *mark_rule_qualifier(struct dw_ctx *c, uint64_t target, char *buf, size_t len)
{
	size_t lo;
	const char *q;
	Dwarf_Die t;

	if (!target)
		return NULL;
	if (!c->vars_loaded && load_vars(c))
		return NULL;
	target -= c->dwbias;
	lo = ARRAY_COUNT_LE(c->vars, c->nr_vars, addr, target);	/* first var above target */
	/*
	 * Variables can share addresses (aliases, a static's copies): look at the
	 * few below the target, nearest first; a large array further down still
	 * covers it when nothing smaller lies in between.
	 */
	for (size_t i = lo, seen = 0; i-- > 0 && seen < 64; seen++) {
		struct gvar *v = &c->vars[i];

		if (target >= v->addr + v->size || mark_dw_type_of(&v->die, &t))
			continue;
		q = type_qual_at(&t, target - v->addr, 0);
		if (q) {
			const char *name = dwarf_diename(&v->die);

			snprintf(buf, len, "%s %s", q, name ? name : "(unnamed)");
			return buf;
		}
	}
	return NULL;
}

/* The source file for a DWARF path: under --source-dir first (any path suffix), then as is. */
struct mark_src *mark_source_get(struct dw_ctx *c, const char *path)
{
	struct src_cache *cached, **prev;
	struct mark_src *src = NULL;
	const char *dir = c->opts ? c->opts->source_dir : NULL;

	/*
	 * Moved to the front when found: a vmlinux's sites name thousands of
	 * files, but one function's sites the same few, one after another.
	 */
	for (prev = &c->srcs; (cached = *prev); prev = &cached->next) {
		if (strcmp(cached->path, path))
			continue;
		*prev = cached->next;
		cached->next = c->srcs;
		c->srcs = cached;
		return cached->src;
	}
	if (dir && *dir) {
		for (const char *p = path; p && !src; p = strchr(p, '/')) {
			char buf[4096];

			while (*p == '/')
				p++;
			if (!*p)
				break;
			snprintf(buf, sizeof(buf), "%s/%s", dir, p);
			src = mark_src__load(buf);
		}
	}
	if (!src)
		src = mark_src__load(path);
	cached = calloc(1, sizeof(*cached));
	if (!cached) {
		mark_src__free(src);
		return NULL;
	}
	cached->path = strdup(path);
	if (!cached->path) {
		free(cached);
		mark_src__free(src);
		return NULL;
	}
	cached->src = src;
	cached->next = c->srcs;
	c->srcs = cached;
	return src;
}

/*
 * The rows for the instruction at pc, its own (the last one at pc, or the
 * one covering pc) first, then the earlier rows at the same address (views:
 * statements that begin there).  Returns how many were stored.
 */
int mark_site_rows(Dwarf_Die *cu, Dwarf_Addr pc, struct src_row *rows, int max)
{
	Dwarf_Lines *lines;
	size_t n, lo = 0, hi;
	int nr = 0;

	if (dwarf_getsrclines(cu, &lines, &n) || !n)
		return 0;
	hi = n;
	while (lo < hi) {	/* first row above pc */
		size_t mid = lo + (hi - lo) / 2;
		Dwarf_Addr a;

		if (dwarf_lineaddr(dwarf_onesrcline(lines, mid), &a) || a <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && nr < max;) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		bool end = false;

		if (dwarf_lineaddr(l, &a) || dwarf_lineendsequence(l, &end) || end)
			break;
		if (nr && a != pc)
			break;
		rows[nr].file = dwarf_linesrc(l, NULL, NULL);
		if (!rows[nr].file || dwarf_lineno(l, &rows[nr].line))
			break;
		if (dwarf_linecol(l, &rows[nr].col))
			rows[nr].col = 0;
		nr++;
		if (a != pc)
			break;	/* the covering row of an instruction without its own */
	}
	return nr;
}

/* Does function or instance d name an accessor?  (inlined: it is an inlined copy.) */
static const char *accessor_in(struct dw_ctx *c, Dwarf_Die *d, bool inlined, const char **fn,
			       bool *io)
{
	const char *name = qualified_name(c, d);

	if (mark__io_accessor_match(name, inlined))
		*io = true;
	else if (!mark__accessor_match(name, inlined))
		return NULL;
	*fn = name;
	return name;
}

/*
 * Inline accessor rule: the accessor's name, or NULL.  The inlined
 * instances that cover pc, innermost first, then the function itself.
 */
const char *mark_rule_accessor(struct dw_ctx *c, Dwarf_Die *cu, Dwarf_Addr pc, const char **fn,
			  bool *io)
{
	int top = -1;

	if (!function_load(c, cu, pc))
		return accessor_by_scopes(c, cu, pc, fn, io);
	for (size_t i = 0; i < c->nr_inl; i++)
		if (pc >= c->inl[i].lo && pc < c->inl[i].hi && c->inl[i].depth > top)
			top = c->inl[i].depth;
	for (int d = top; d >= 0; d--) {
		for (size_t i = 0; i < c->nr_inl; i++) {
			struct inl_range *r = &c->inl[i];
			const char *hit;

			if (r->depth != d || pc < r->lo || pc >= r->hi)
				continue;
			hit = accessor_in(c, &r->die, true, fn, io);
			if (hit)
				return hit;
		}
	}
	return accessor_in(c, &c->fn, dwarf_hasattr(&c->fn, DW_AT_inline), fn, io);
}

/* ------------------------------------------------------------ the debug file handle */

int mark_debug__open(const char *path, const struct mark_opts *opts, struct mark_debug **out)
{
	static const struct mark_opts no_opts;
	struct dw_ctx *c = calloc(1, sizeof(*c));
	int err;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->opts = opts ? opts : &no_opts;
	err = dw_open(c, path);
	if (err) {
		dw_close(c);
		free(c);
		return err;
	}
	*out = (struct mark_debug *)c;
	return 0;
}

void mark_debug__close(struct mark_debug *d)
{
	if (!d)
		return;
	dw_close((struct dw_ctx *)d);
	free(d);
}

void mark_debug__sources(struct mark_debug *d, void (*fn)(void *ctx, const struct mark_src *src),
			 void *ctx)
{
	const struct dw_ctx *c = (const struct dw_ctx *)d;

	for (const struct src_cache *s = c->srcs; s; s = s->next)
		if (s->src)
			fn(ctx, s->src);
}

int mark_debug__sym(struct mark_debug *d, const char *name, bool func, uint64_t *addr,
		    uint64_t *size)
{
	struct dw_ctx *c = (struct dw_ctx *)d;

	/* kmark asks for every function and static target of a module: index the names once. */
	if (!c->syms) {
		c->syms = sym_index__build(c->mod);
		if (!c->syms)
			return -ENOMEM;
	}
	return sym_index__find(c->syms, name, func, true, addr, size);
}

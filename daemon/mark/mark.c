// SPDX-License-Identifier: GPL-2.0-only
/*
 * Marking sites (see mark.h and docs/marking.md): the rules applied to each
 * site in their order of precedence.  The rules' tables are in
 * tables.c, the source scanner in src.c, the marks file in
 * rules.c and the debug info they read in dwarf.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mark_int.h"
#include "sites/elf_symbols.h"
#include "util/array.h"
#include "util/print.h"

static const char *const reason_names[MARK_REASON_COUNT] = {
	[MARK_NONE] = "plain",
	[MARK_LOCK_PREFIX] = "lock prefix",
	[MARK_XCHG] = "xchg",
	[MARK_CAS_LOOP] = "cas loop read",
	[MARK_INLINE_ACCESSOR] = "inline accessor",
	[MARK_QUALIFIER] = "qualifier",
	[MARK_SOURCE_MACRO] = "source macro",
	[MARK_MARKS_FILE] = "marks file",
	[MARK_IO_ACCESSOR] = "I/O accessor",
	[MARK_FENCED_STORE] = "fenced store",
	[MARK_CXA_GUARD] = "C++ guard",
	[MARK_SPIN_WAIT] = "spin-wait read",
};

const char *mark_reason__name(uint32_t reason)
{
	if (reason >= MARK_REASON_COUNT || !reason_names[reason])
		return "unknown";
	return reason_names[reason];
}

uint64_t mark__static_target(const struct site *s)
{
	const struct kcsand_site *d = &s->desc;

	if (d->index != KCSAND_REG_NONE)
		return 0;
	if (d->base == KCSAND_REG_RIP)
		return s->vaddr + d->insn_len + d->disp;
	if (d->base == KCSAND_REG_NONE)
		return (uint64_t)d->disp;	/* absolute: -mcmodel=kernel */
	return 0;
}

/* ------------------------------------------------------------ applying */

static void set_mark(struct site *s, enum mark_kind kind, enum mark_reason reason)
{
	s->desc.flags |= KCSAND_SITE_MARKED;
	if (kind == MARK_KIND_DATA_RACE)
		s->desc.flags |= KCSAND_SITE_DATA_RACE;
	s->reason = reason;
}

void mark__reset(struct target_obj *obj)
{
	for (size_t i = 0; i < obj->sites.n; i++) {
		struct site *s = &obj->sites.v[i];

		s->desc.flags &= ~(KCSAND_SITE_MARKED | KCSAND_SITE_DATA_RACE | KCSAND_SITE_SRC_PLAIN);
		s->desc.order = KCSAND_ORDER_DEFAULT;
		s->reason = s->insn_reason;
		if (s->reason != MARK_NONE)
			s->desc.flags |= KCSAND_SITE_MARKED;
		else	/* an _Atomic's teaching came from the debug info: set again */
			s->desc.flags &= ~KCSAND_SITE_TEACHES;
		if (s->reason == MARK_SPIN_WAIT)
			s->desc.flags |= KCSAND_SITE_TEACHES;
	}
}

/* Where a site is in the source, and what the source says of it. */
struct site_src {
	const char *file;
	int line, col;
	int alt_line;		/* the instruction's own row, when a statement's decides */
	enum mark_kind kind;	/* a READ_ONCE() & co. at the site */
	const char *tok;	/* the macro that said so */
	bool read;		/* the line was read from the source file */
	bool volatile_cast;	/* the line says volatile */
	bool plain_assign;	/* the line is a plain assignment (mark_src__plain_assignment) */
	int order;		/* the memory order it names, enum kcsand_order */
	bool omp_reduction;	/* the line is an OpenMP pragma with a reduction clause */
};

static void site_source(struct dw_ctx *c, Dwarf_Die *cu, Dwarf_Addr pc, struct site_src *ss,
			struct mark_stats *stats)
{
	struct src_row rows[8];
	int n = mark_site_rows(cu, pc, rows, 8);
	struct mark_src *ms = n ? mark_source_get(c, rows[0].file) : NULL;
	int omp;

	if (n) {
		ss->file = rows[0].file;
		ss->line = rows[0].line;
		ss->col = rows[0].col;
	}
	/*
	 * The instruction's own row can point at a brace (gcc puts a
	 * returned value's load at the closing '}'): then the
	 * statement it belongs to, the row before at the same
	 * address, decides, by its line alone.
	 */
	if (ms && n > 1 && !mark_src__col_informative(ms, ss->line, ss->col)) {
		ss->alt_line = ss->line;
		ss->file = rows[1].file;
		ss->line = rows[1].line;
		ss->col = 0;
		ms = mark_source_get(c, ss->file);
	}
	if (ms && ss->line > 0) {
		ss->kind = mark_src__at(ms, ss->line, ss->col, &ss->tok);
		ss->volatile_cast = mark_src__has_word(ms, ss->line, "volatile");
		ss->plain_assign = mark_src__plain_assignment(ms, ss->line);
		ss->order = mark_src__order(ms, ss->line);
		/* A reduction's combine orders nothing: its barrier does (DRB140). */
		ss->omp_reduction = mark_src__omp_reduction(ms, ss->line);
		if (ss->omp_reduction)
			ss->order = KCSAND_ORDER_RELAXED;
		omp = mark_src__omp_atomic(ms, ss->line);
		if (omp >= 0 && ss->kind == MARK_KIND_PLAIN) {
			ss->kind = MARK_KIND_MARKED;
			ss->tok = "omp atomic";
			ss->order = omp;
		}
		ss->read = true;
	} else if (n)
		stats->no_source++;
}

/* -vv: each rule's decision. */
static void say_mark(const struct site *s, const struct mark_where *w, const struct site_src *ss,
		     const char *detail)
{
	pr_debug("mark: %s+0x%" PRIx64 " (0x%" PRIx64 ") %s:%d:%d: %s%s: %s\n",
		 w->func ? w->func : "?", w->off, s->vaddr, ss->file ? ss->file : "?", ss->line,
		 ss->col, (s->desc.flags & KCSAND_SITE_DATA_RACE) ? "data_race, " : "",
		 mark_reason__name(s->reason), detail ? detail : "");
}

/* The memory order the source gives a site, and what a reduction's line says of it. */
static void mark_order(struct site *s, const struct mark_where *w, struct site_src *ss)
{
	/* A lock RMW's order, too: marked by its instruction, relaxed by its source. */
	s->desc.order = ss->order;
	if (!ss->omp_reduction)
		return;
	/*
	 * A combine does not teach that its address holds an atomic
	 * (bpf/atomics.bpf.h): the variable's other accesses are plain, and a
	 * store after another thread's combine, no barrier between, races with
	 * it as much as one before (DRB140, in either order).  Except one that
	 * begins its outlined function: uprobes refuse that locked first
	 * instruction, so the function's spawn and end go unseen
	 * (daemon/history/history.c), and only the run-time rule, which takes
	 * the combine for a lock's, keeps the variable's initialisation before
	 * the team from racing with it: it keeps its teaching and the default
	 * order.
	 */
	if (w->off != 0)
		s->desc.flags &= ~KCSAND_SITE_TEACHES;
	else
		s->desc.order = KCSAND_ORDER_DEFAULT;
	/*
	 * A float reduction combines with a `lock cmpxchg` loop, whose first
	 * read of the variable is a plain mov on the pragma's line: the
	 * combine's, relaxed as it is.  It was taken for an atomic's only by
	 * the run-time rule, which a relaxed combine no longer covers
	 * (bpf/history_shadow.bpf.h, hb_access_fill).
	 */
	if (ss->kind == MARK_KIND_PLAIN && !(s->desc.flags & KCSAND_SITE_WRITE)) {
		ss->kind = MARK_KIND_MARKED;
		ss->tok = "omp reduction";
	}
}

/*
 * The source shows a plain access to a named object.  A spin-wait load
 * (sites/spinwait.c) was taken for an atomic's only for want of debug
 * info: a polled plain flag is a race, as TSan says.
 */
static void src_plain(struct site *s)
{
	s->desc.flags |= KCSAND_SITE_SRC_PLAIN;
	if (s->reason == MARK_SPIN_WAIT) {
		s->desc.flags &= ~(KCSAND_SITE_MARKED | KCSAND_SITE_TEACHES);
		s->reason = MARK_NONE;
	}
}

/*
 * The debug info types the object an `_Atomic`: the site's address holds an
 * atomic at run time, as a lock prefix shows, and teaches it
 * (bpf/atomics.bpf.h).  The object's other accesses may be plain movs the
 * debug info cannot type (a pointer reloaded from the stack, an indexed
 * array: CPython's eval loop reads eval_breaker so), and a relaxed atomic
 * has no lock anywhere to teach its address.  `volatile` marks, and
 * teaches nothing: it is no atomic.
 */
static void set_qualified(struct site *s, const char *detail)
{
	set_mark(s, MARK_KIND_MARKED, MARK_QUALIFIER);
	if (!strncmp(detail, "_Atomic", 7))
		s->desc.flags |= KCSAND_SITE_TEACHES;
}

/*
 * A store through a pointer on a line that assigns plainly (`s = 1;`,
 * `p->done = 1;`) and names nothing atomic: the source shows a plain store,
 * whatever object it reaches.  Left plain, it is not taken for the release
 * of an address a spin-wait or a lock taught: DataRaceBench's DRB183, `s =
 * 1` against `omp atomic read` polling s through the region's data block,
 * was missed so.  Stores only: a seq_cst store through an `_Atomic` pointer
 * (`*p = 1`) is a fenced store or an xchg, marked by its instruction, but a
 * seq_cst load is a plain mov on a line that says nothing.  A macro that
 * hides an atomic store names no `=` (`SET_FLAG(p);`).
 */
static bool plain_store(const struct site *s, const struct site_src *ss)
{
	return (s->desc.flags & (KCSAND_SITE_READ | KCSAND_SITE_WRITE)) == KCSAND_SITE_WRITE &&
	       ss->plain_assign && ss->kind == MARK_KIND_PLAIN;
}

/* The qualifier rule: the static target's type, else that of the pointer in the base register. */
static const char *rule_qualifier(struct dw_ctx *c, Dwarf_Die *cup, Dwarf_Addr pc,
				  const struct mark_where *w, const struct site *s, char *buf,
				  size_t len)
{
	if (!c || !c->dw)
		return NULL;
	if (w->target)
		return mark_rule_qualifier(c, w->target, buf, len);
	if (cup && w->pointers)
		return mark_rule_pointee(c, cup, pc, &s->desc, buf, len);
	return NULL;
}

void mark__site(struct site *s, const struct mark_where *w, const struct mark_opts *opts,
		struct mark_stats *stats)
{
	struct dw_ctx *c = (struct dw_ctx *)w->dbg;
	const char *detail = NULL, *acc = NULL, *acc_name = NULL;
	struct site_src ss = { .kind = MARK_KIND_PLAIN };
	enum mark_kind mf;
	bool io = false;
	uint32_t before = s->reason;
	Dwarf_Die cu, *cup = NULL;
	Dwarf_Addr pc = c ? w->pc - c->dwbias : 0;
	char qbuf[256];

	if (c && c->dw && w->has_pc && dwarf_addrdie(c->dw, pc, &cu)) {
		cup = &cu;
		site_source(c, cup, pc, &ss, stats);
	}
	mf = mark_rules__match(opts->rules, w->func, w->off, ss.file, ss.line);
	if (ss.alt_line && mf == MARK_KIND_PLAIN)
		mf = mark_rules__match(opts->rules, w->func, w->off, ss.file, ss.alt_line);

	if (cup)
		acc = mark_rule_accessor(c, cup, pc, &acc_name, &io);
	mark_order(s, w, &ss);

	if (io) {
		/* Device memory: re-reading it to compare values could change the device. */
		set_mark(s, MARK_KIND_DATA_RACE, MARK_IO_ACCESSOR);
		detail = acc_name;
	} else if (mf == MARK_KIND_DATA_RACE) {
		set_mark(s, mf, MARK_MARKS_FILE);
		detail = "data_race";
	} else if (ss.kind == MARK_KIND_DATA_RACE) {
		set_mark(s, ss.kind, MARK_SOURCE_MACRO);
		detail = ss.tok;
	} else if (s->reason != MARK_NONE && s->reason != MARK_SPIN_WAIT) {
		return;
	} else if (mf == MARK_KIND_MARKED) {
		set_mark(s, mf, MARK_MARKS_FILE);
		detail = "marked";
	} else if (acc) {
		set_mark(s, MARK_KIND_MARKED, MARK_INLINE_ACCESSOR);
		detail = acc_name;
	} else if (cup && (detail = mark_rule_seqcount(c, cup, pc))) {
		/* Counted with the inline accessors: the helper's inlined copy marks it. */
		set_mark(s, MARK_KIND_MARKED, MARK_INLINE_ACCESSOR);
	} else if ((detail = rule_qualifier(c, cup, pc, w, s, qbuf, sizeof(qbuf)))) {
		set_qualified(s, detail);
	} else if (ss.kind == MARK_KIND_MARKED) {
		set_mark(s, ss.kind, MARK_SOURCE_MACRO);
		detail = ss.tok;
	} else if (cup && ss.read && !ss.volatile_cast && (w->target || plain_store(s, &ss))) {
		/*
		 * A named plain object, in a source line we read: atomics learned
		 * at run time do not apply (bpf/atomics.bpf.h).  A volatile access
		 * (*(volatile int *)&lock) is one the kernel's KCSAN takes as marked.
		 */
		src_plain(s);
	}
	/* A debug line (-vv): each site a rule decided, with its detail. */
	if (s->reason != before)
		say_mark(s, w, &ss, detail);
}

void mark__update_stats(struct target_obj *obj)
{
	obj->stats.marked = 0;
	for (size_t i = 0; i < obj->sites.n; i++)
		if (obj->sites.v[i].desc.flags & KCSAND_SITE_MARKED)
			obj->stats.marked++;
}

/*
 * C++ guard variables, named _ZGV* by the Itanium ABI: the guard of a
 * function-local static.  Code tests its first byte before it calls
 * __cxa_guard_acquire(); once the static is built, that load is all a
 * thread does, and on x86 the acquire it is compiles to a plain mov.  It
 * is marked, so that the history takes it as the acquire of what
 * __cxa_guard_release() released.  Found by name in the symbol tables,
 * debug info or not.
 */
struct guard_vars {
	struct guard_var {
		uint64_t start, end;
	} *v;
	size_t n, cap;
};

static int add_guard(const struct elf_symbol *s, void *arg)
{
	struct guard_vars *g = arg;

	if (GELF_ST_TYPE(s->sym.st_info) != STT_OBJECT || !s->sym.st_value || !s->name ||
	    strncmp(s->name, "_ZGV", 4))
		return 0;
	if (ARRAY_RESERVE(g->v, g->cap, g->n, 16))
		return -ENOMEM;
	g->v[g->n++] = (struct guard_var){
		.start = s->sym.st_value,
		.end = s->sym.st_value + (s->sym.st_size ? s->sym.st_size : 8),
	};
	return 0;
}

static void read_guards(const char *path, struct guard_vars *g)
{
	struct elf_file ef;

	if (elf_file__open(path, ELF_C_READ_MMAP, &ef))
		return;
	elf_symbols__each(ef.elf, ELF_SYMTAB | ELF_DYNSYM, add_guard, g);
	elf_file__close(&ef);
}

static void mark_guard_loads(struct target_obj *obj)
{
	struct guard_vars g = { 0 };

	read_guards(obj->path, &g);
	for (size_t i = 0; i < obj->sites.n && g.n; i++) {
		struct site *s = &obj->sites.v[i];
		uint64_t target = mark__static_target(s);

		if (s->reason != MARK_NONE || !target || (s->desc.flags & KCSAND_SITE_WRITE))
			continue;
		for (size_t k = 0; k < g.n; k++) {
			if (target < g.v[k].start || target >= g.v[k].end)
				continue;
			set_mark(s, MARK_KIND_MARKED, MARK_CXA_GUARD);
			pr_debug("mark: 0x%" PRIx64 ": C++ guard at 0x%" PRIx64 "\n", s->vaddr, target);
			break;
		}
	}
	free(g.v);
}

int mark__apply(struct target_obj *obj, const struct mark_opts *opts, struct mark_stats *stats)
{
	static const struct mark_opts no_opts;
	struct mark_stats dummy;
	struct mark_debug *dbg = NULL;
	struct dw_ctx *c;
	int err;

	if (!opts)
		opts = &no_opts;
	if (!stats)
		stats = &dummy;
	memset(stats, 0, sizeof(*stats));
	err = mark_debug__open(obj->path, opts, &dbg);
	if (err && err != -ENODATA && err != -ENOEXEC)
		return err;
	stats->dwarf = !err;
	c = (struct dw_ctx *)dbg;

	/* Start from what the instructions say, so that marking can run again (new marks file). */
	mark__reset(obj);
	for (size_t i = 0; i < obj->sites.n; i++) {
		struct site *s = &obj->sites.v[i];
		const struct elf_func *f = target_obj__site_func(obj, s);
		uint64_t target = mark__static_target(s);
		struct mark_where w = {
			.func = f ? f->name : NULL,
			.off = f ? s->vaddr - f->vaddr : 0,
			.dbg = dbg,
			.has_pc = dbg != NULL,
			.pc = c ? s->vaddr + c->elfbias : 0,
			.target = c && target ? target + c->elfbias : 0,
			.pointers = true,
		};

		mark__site(s, &w, opts, stats);
	}
	mark_guard_loads(obj);
	mark__update_stats(obj);
	mark_debug__close(dbg);
	return 0;
}

void mark__count(const struct site *sites, size_t n, uint64_t *counts, uint64_t *data_race)
{
	for (size_t i = 0; i < n; i++) {
		if (sites[i].reason < MARK_REASON_COUNT)
			counts[sites[i].reason]++;
		if (data_race && (sites[i].desc.flags & KCSAND_SITE_DATA_RACE))
			(*data_race)++;
	}
}

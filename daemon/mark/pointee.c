// SPDX-License-Identifier: GPL-2.0-only
/*
 * The qualifier rule through a pointer (docs/marking.md, rule 4): an access
 * `disp(%reg)` whose base register holds, at that instruction, a variable
 * or parameter the debug info types as a pointer, and whose pointee's byte
 * disp is an `_Atomic` or `volatile` object.  A relaxed atomic is a plain
 * mov on x86, and most atomics are reached through a pointer (a field of a
 * struct passed around: CPython's `interp->ceval.gil_drop_request`), where
 * the static rule, which names only objects at a fixed address, sees
 * nothing.  Which variable a register holds is the variable's location
 * list, per function: gathered once for the function a run of sites is in,
 * keeping only pointers whose pointee has a qualified member at all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

#include "mark_int.h"
#include "util/array.h"

/* A pointer variable in a register over [lo, hi), and the type it points to. */
struct qptr {
	Dwarf_Addr lo, hi;
	int reg;		/* DWARF register number */
	Dwarf_Die pointee;
	const char *name;
};

/* Whether a type holds a qualified object anywhere, by its DIE offset: a direct-mapped memo. */
#define QMEMO_SIZE 4096
struct qmemo {
	Dwarf_Off off;		/* 0: empty */
	bool has;
};

struct pointee_ctx {
	Dwarf_Off fn_off;	/* the function qp was gathered for, or 0 */
	struct qptr *qp;
	size_t nr_qp, cap_qp;
	struct qmemo memo[QMEMO_SIZE];
};

/* DWARF's x86-64 numbers of kcsand's registers (include/kcsand.h), -1 for none. */
static const int dwarf_reg_of[KCSAND_REG_COUNT] = {
	[KCSAND_REG_NONE] = -1, [KCSAND_REG_RAX] = 0, [KCSAND_REG_RCX] = 2,
	[KCSAND_REG_RDX] = 1,	[KCSAND_REG_RBX] = 3, [KCSAND_REG_RSP] = 7,
	[KCSAND_REG_RBP] = 6,	[KCSAND_REG_RSI] = 4, [KCSAND_REG_RDI] = 5,
	[KCSAND_REG_R8] = 8,	[KCSAND_REG_R9] = 9,  [KCSAND_REG_R10] = 10,
	[KCSAND_REG_R11] = 11,	[KCSAND_REG_R12] = 12, [KCSAND_REG_R13] = 13,
	[KCSAND_REG_R14] = 14,	[KCSAND_REG_R15] = 15, [KCSAND_REG_RIP] = -1,
};

static bool type_has_qual(struct pointee_ctx *p, Dwarf_Die *t, int depth);

/* Any member of aggregate t holds a qualified object. */
static bool members_have_qual(struct pointee_ctx *p, Dwarf_Die *t, int depth)
{
	Dwarf_Die m, mt;

	if (dwarf_child(t, &m))
		return false;
	do {
		if (dwarf_tag(&m) == DW_TAG_member && !mark_dw_type_of(&m, &mt) &&
		    type_has_qual(p, &mt, depth + 1))
			return true;
	} while (dwarf_siblingof(&m, &m) == 0);
	return false;
}

/* Pointers are not followed: what a member points to is another object. */
static bool type_has_qual(struct pointee_ctx *p, Dwarf_Die *t, int depth)
{
	Dwarf_Off off = dwarf_dieoffset(t);
	struct qmemo *m = &p->memo[(off >> 2) % QMEMO_SIZE];
	Dwarf_Die next;
	bool has = false;

	if (depth > 16)
		return false;
	if (m->off == off)
		return m->has;
	switch (dwarf_tag(t)) {
	case DW_TAG_atomic_type:
	case DW_TAG_volatile_type:
		has = true;
		break;
	case DW_TAG_typedef:
	case DW_TAG_const_type:
	case DW_TAG_restrict_type:
	case DW_TAG_array_type:
		has = !mark_dw_type_of(t, &next) && type_has_qual(p, &next, depth + 1);
		break;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		has = members_have_qual(p, t, depth);
		break;
	default:
		break;
	}
	*m = (struct qmemo){ .off = off, .has = has };
	return has;
}

/* The type d points to, when d is a pointer (through typedefs and qualifiers). */
static bool pointee_of(Dwarf_Die *d, Dwarf_Die *out)
{
	Dwarf_Die t, next;

	if (mark_dw_type_of(d, &t))
		return false;
	for (int i = 0; i < 16; i++) {
		switch (dwarf_tag(&t)) {
		case DW_TAG_typedef:
		case DW_TAG_const_type:
		case DW_TAG_volatile_type:
		case DW_TAG_restrict_type:
			if (mark_dw_type_of(&t, &next))
				return false;
			t = next;
			break;
		case DW_TAG_pointer_type:
		case DW_TAG_reference_type:
		case DW_TAG_rvalue_reference_type:
			return !mark_dw_type_of(&t, out);
		default:
			return false;
		}
	}
	return false;
}

/* The ranges over which variable d is a register, each a qptr. */
static int add_var(struct pointee_ctx *p, Dwarf_Die *d, Dwarf_Die *pointee)
{
	Dwarf_Attribute a;
	Dwarf_Addr base, lo, hi;
	Dwarf_Op *ops;
	size_t nops;
	ptrdiff_t off = 0;
	int reg;

	if (!dwarf_attr(d, DW_AT_location, &a))
		return 0;
	while ((off = dwarf_getlocations(&a, off, &base, &lo, &hi, &ops, &nops)) > 0) {
		if (nops != 1)
			continue;
		if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31)
			reg = ops[0].atom - DW_OP_reg0;
		else if (ops[0].atom == DW_OP_regx)
			reg = (int)ops[0].number;
		else
			continue;
		if (ARRAY_RESERVE(p->qp, p->cap_qp, p->nr_qp, 32))
			return -ENOMEM;
		p->qp[p->nr_qp++] = (struct qptr){ .lo = lo, .hi = hi, .reg = reg,
						   .pointee = *pointee,
						   .name = dwarf_diename(d) };
	}
	return 0;
}

/* Every pointer variable and parameter under parent whose pointee has a qualified object. */
static int gather(struct pointee_ctx *p, Dwarf_Die *parent, int depth)
{
	Dwarf_Die d, pointee;

	if (depth > 32 || dwarf_child(parent, &d))
		return 0;
	do {
		int tag = dwarf_tag(&d);

		if ((tag == DW_TAG_variable || tag == DW_TAG_formal_parameter) &&
		    pointee_of(&d, &pointee) && type_has_qual(p, &pointee, 0) &&
		    add_var(p, &d, &pointee))
			return -ENOMEM;
		if ((tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) &&
		    gather(p, &d, depth + 1))
			return -ENOMEM;
	} while (dwarf_siblingof(&d, &d) == 0);
	return 0;
}

void mark_pointee__free(struct dw_ctx *c)
{
	if (!c->pointee)
		return;
	free(c->pointee->qp);
	free(c->pointee);
	c->pointee = NULL;
}

/* The pointers of fn, gathered unless they are already. */
static struct pointee_ctx *load_fn(struct dw_ctx *c, Dwarf_Die *fn)
{
	struct pointee_ctx *p = c->pointee;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		c->pointee = p;
	}
	if (p->fn_off == dwarf_dieoffset(fn))
		return p;
	p->nr_qp = 0;
	p->fn_off = 0;
	if (gather(p, fn, 0))
		return NULL;
	p->fn_off = dwarf_dieoffset(fn);
	return p;
}

const char *mark_rule_pointee(struct dw_ctx *c, Dwarf_Die *cu, Dwarf_Addr pc,
			      const struct kcsand_site *d, char *buf, size_t len)
{
	struct pointee_ctx *p;
	Dwarf_Die fn;
	int reg;

	if (d->base >= KCSAND_REG_COUNT || d->index != KCSAND_REG_NONE || d->disp < 0)
		return NULL;
	reg = dwarf_reg_of[d->base];
	if (reg < 0 || !mark_dw_function_at(c, cu, pc, &fn))
		return NULL;
	p = load_fn(c, &fn);
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->nr_qp; i++) {
		struct qptr *q = &p->qp[i];
		const char *qual;

		if (q->reg != reg || pc < q->lo || pc >= q->hi)
			continue;
		qual = mark_type_qual_at(&q->pointee, (uint64_t)d->disp);
		if (!qual)
			continue;
		snprintf(buf, len, "%s %s->+%d", qual, q->name ? q->name : "(unnamed)",
			 (int)d->disp);
		return buf;
	}
	return NULL;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stack slots whose address a function lets out.  Stack accesses are not
 * sites: a frame's slots are its thread's own, and probing them all would
 * cost much for nothing.  A local whose address is passed to a call or
 * stored is another matter: OpenMP's `shared(x)` hands the parent's x to
 * every thread of the team (and to tasks) through a pointer, and the
 * parent's own accesses to x are then rsp- or rbp-relative.  The rule is a
 * compiler's escape analysis run backwards (the one that decides for TSan
 * which locals get instrumented): a `lea off(%rsp|%rbp),%reg` whose result
 * reaches a call's argument register, a store, or a non-general register
 * within a few instructions makes the slot at that offset escaped, and the
 * function's direct accesses to it become sites.
 *
 * How far a slot reaches is not in the code: it runs up to the next
 * escaped slot, at most ESCAPE_EXTENT bytes, and never past the return
 * address.  That may take in a spill slot or two (probes, never reports:
 * no other thread reaches them); a bigger object's accesses past the
 * extent through rsp/rbp are missed (those through a pointer are sites).
 */
#include <errno.h>
#include <stdlib.h>

#include "util/array.h"

#include "decode_int.h"

/* Instructions after the lea within which its result must escape. */
#define ESCAPE_WINDOW	24
/* Bytes an escaped slot reaches at most: a few scalars, or a small struct. */
#define ESCAPE_EXTENT	64

/* rdi, rsi, rdx, rcx, r8, r9: where the SysV ABI passes pointers to a callee. */
#define ARG_REGS	((1u << 7) | (1u << 6) | (1u << 2) | (1u << 1) | (1u << 8) | (1u << 9))
/* rbx, rbp, r12-r15: what a call leaves as it was. */
#define CALLEE_SAVED	((1u << 3) | (1u << 5) | (0xfu << 12))

/* A register operand's GPR bit, or 0 (not a general register, or none). */
static unsigned int gpr_bit(const ZydisDecodedOperand *op)
{
	int g = op->type == ZYDIS_OPERAND_TYPE_REGISTER ? gpr_num(op->reg.value) : -1;

	return g >= 0 ? 1u << g : 0;
}

static bool writes_memory(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	for (int i = 0; i < in->operand_count; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    ops[i].mem.type == ZYDIS_MEMOP_TYPE_MEM &&
		    (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			return true;
	return false;
}

/* A register other than a GPR (and than flags, rip, rsp's hidden use) written. */
static bool writes_other_reg(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	for (int i = 0; i < in->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];

		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) &&
		    op->visibility != ZYDIS_OPERAND_VISIBILITY_HIDDEN && !gpr_bit(op))
			return true;
	}
	return false;
}

/*
 * One instruction's effect on the registers that hold the pointer: true if
 * it lets the pointer out; *live is updated (copies and pointer arithmetic
 * keep it, overwrites end it).
 */
static bool escape_step(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
			unsigned int gpr_writes, unsigned int *live)
{
	unsigned int read = 0, keep = 0;

	if (in->meta.category == ZYDIS_CATEGORY_CALL) {
		if (*live & ARG_REGS)
			return true;
		*live &= CALLEE_SAVED;
		return false;
	}
	for (int i = 0; i < in->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];

		if (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
			read |= gpr_bit(op) & *live;
		/* lea 8(%rax),%rdx: an address inside the same object. */
		if (in->mnemonic == ZYDIS_MNEMONIC_LEA && op->type == ZYDIS_OPERAND_TYPE_MEMORY) {
			int g = gpr_num(op->mem.base);

			if (g >= 0 && (*live & (1u << g)))
				keep = 1;
		}
	}
	if (read && (writes_memory(in, ops) || writes_other_reg(in, ops)))
		return true;
	if ((read || keep) && (in->mnemonic == ZYDIS_MNEMONIC_MOV ||
			       in->mnemonic == ZYDIS_MNEMONIC_LEA ||
			       in->mnemonic == ZYDIS_MNEMONIC_ADD ||
			       in->mnemonic == ZYDIS_MNEMONIC_SUB))
		keep = gpr_bit(&ops[0]);
	else
		keep = 0;
	*live = (*live & ~gpr_writes) | keep;
	return false;
}

/* Whether the result of the lea at instruction k leaves the register file. */
static bool lea_escapes(ZydisDecoder *dec, const uint8_t *code, size_t len,
			const struct insn_fx *fx, size_t nfx, size_t k, unsigned int live)
{
	for (size_t j = k + 1; j < nfx && j <= k + ESCAPE_WINDOW && live; j++) {
		ZydisDecodedInstruction in;
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + fx[j].off, len - fx[j].off,
							 &in, ops)))
			return false;
		if (escape_step(&in, ops, fx[j].gpr_writes, &live))
			return true;
		/* A tail call passes the pointer on, a return or jump ends the path. */
		if (fx[j].flow == FLOW_JUMP || fx[j].flow == FLOW_STOP)
			return fx[j].flow == FLOW_JUMP && !fx[j].has_target && (live & ARG_REGS);
	}
	return false;
}

static int escape_add(struct stack_escapes *e, int64_t off)
{
	for (size_t i = 0; i < e->n; i++)
		if (e->off[i] == off)
			return 0;
	if (ARRAY_RESERVE(e->off, e->cap, e->n, 16))
		return -ENOMEM;
	e->off[e->n++] = off;
	return 0;
}

static int cmp_off(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* A lea of a stack slot into a 64-bit GPR: its slot's frame offset in *off. */
static bool stack_lea(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
		      const struct frame_state *s, int64_t *off)
{
	int base;

	if (in->mnemonic != ZYDIS_MNEMONIC_LEA || !gpr_bit(&ops[0]) ||
	    ops[0].size != 64 || ops[1].mem.index != ZYDIS_REGISTER_NONE)
		return false;
	base = kcsand_reg_of(ops[1].mem.base);
	if (base != KCSAND_REG_RSP && base != KCSAND_REG_RBP)
		return false;
	return frame_stack_off(s, base, ops[1].mem.disp.has_displacement ?
				 ops[1].mem.disp.value : 0, off);
}

int escape_scan(ZydisDecoder *dec, const uint8_t *code, size_t len, const struct insn_fx *fx,
		size_t nfx, const struct frame_slot *slot, struct stack_escapes *out)
{
	for (size_t k = 0; k < nfx; k++) {
		ZydisDecodedInstruction in;
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
		int64_t off;
		int err;

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + fx[k].off, len - fx[k].off,
							 &in, ops)))
			return -EINVAL;	/* the first pass decoded it */
		if (!stack_lea(&in, ops, &slot[k].s, &off) ||
		    !lea_escapes(dec, code, len, fx, nfx, k, gpr_bit(&ops[0])))
			continue;
		err = escape_add(out, off);
		if (err)
			return err;
	}
	if (out->n > 1)
		qsort(out->off, out->n, sizeof(*out->off), cmp_off);
	return 0;
}

bool escape_covers(const struct stack_escapes *e, int64_t off, unsigned int size)
{
	/* The highest escaped slot that starts before the access ends. */
	for (size_t i = e->n; i-- > 0;) {
		int64_t end;

		if (e->off[i] >= off + (int64_t)size)
			continue;
		end = e->off[i] + ESCAPE_EXTENT;
		if (i + 1 < e->n && e->off[i + 1] < end)
			end = e->off[i + 1];
		return off < end && off < 0;
	}
	return false;
}

void escape_free(struct stack_escapes *e)
{
	free(e->off);
	e->off = NULL;
	e->n = e->cap = 0;
}

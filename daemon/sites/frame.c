/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Frame analysis: where the return address is at each instruction of a
 * function.  decode__function() describes every instruction's effect on
 * rsp and rbp (frame_effect()); a data flow over the direct branches from
 * the entry then tells, for each site, whether rbp holds the function's
 * frame yet and, when it does not, at which offset from rsp the return
 * address lies, so that the stack walk does not skip the caller.
 */
#include <errno.h>
#include <stdlib.h>

#include "decode_int.h"

static bool is_gpr64(const ZydisDecodedOperand *op)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER && op->size == 64 &&
	       gpr_num(op->reg.value) >= 0;
}

/* dst, src of a register-to-register mov. */
static bool is_reg_pair(const ZydisDecodedOperand *ops, ZydisRegister dst, ZydisRegister src)
{
	return is_reg64(&ops[0], dst) && is_reg64(&ops[1], src);
}

/* The stack adjustments of a prologue. */
static bool is_prologue_insn(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_ENDBR64:
		return true;
	case ZYDIS_MNEMONIC_PUSH:
		return ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER;
	case ZYDIS_MNEMONIC_MOV:
		return is_reg_pair(ops, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSP);
	case ZYDIS_MNEMONIC_SUB:
		return is_reg64(&ops[0], ZYDIS_REGISTER_RSP) &&
		       ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;
	default:
		return false;
	}
}

/*
 * Compilers schedule ordinary instructions into the prologue (GCC moves
 * arguments into callee-saved registers between the pushes), so it ends
 * only at the first branch, call or return, or at the first change of rsp
 * that is not a prologue one.
 */
static bool ends_prologue(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_RET:
	case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSCALL:
		return true;
	default:
		break;
	}
	if (in->mnemonic == ZYDIS_MNEMONIC_UD2)
		return true;
	return !is_prologue_insn(in, ops) && writes_reg(in, ops, ZYDIS_REGISTER_RSP);
}

static void branch_target(struct insn_fx *fx, const ZydisDecodedInstruction *in,
			  const ZydisDecodedOperand *ops, size_t len)
{
	int64_t t;

	if (ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE || !ops[0].imm.is_relative)
		return;
	t = (int64_t)fx->off + in->length + ops[0].imm.value.s;
	if (t >= 0 && (uint64_t)t < len) {
		fx->target = (uint32_t)t;
		fx->has_target = true;
	}
}

/* Registers the instruction writes, and what a call clobbers (SysV ABI) without saying so. */
static void note_gpr_writes(struct insn_fx *fx, const ZydisDecodedInstruction *in,
			    const ZydisDecodedOperand *ops)
{
	for (int i = 0; i < in->operand_count; i++) {
		int g = ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER ? gpr_num(ops[i].reg.value) : -1;

		if (g >= 0 && (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			fx->gpr_writes |= 1u << g;
	}
	if (in->meta.category == ZYDIS_CATEGORY_CALL)
		fx->gpr_writes |= 0x0fc7;	/* rax rcx rdx rsi rdi r8-r11 */
}

/* Branches, calls, push and pop, by category; false when the category says nothing. */
static bool category_effect(struct insn_fx *fx, const ZydisDecodedInstruction *in,
			    const ZydisDecodedOperand *ops, size_t len)
{
	int64_t width = in->operand_width / 8;

	switch (in->meta.category) {
	case ZYDIS_CATEGORY_RET:
		fx->flow = FLOW_STOP;
		return true;
	case ZYDIS_CATEGORY_UNCOND_BR:
		fx->flow = FLOW_JUMP;
		branch_target(fx, in, ops, len);
		/* Through a GOT slot ([rip+x]) it is a tail call, not a jump table. */
		fx->table_jmp = ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER ||
				(ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY &&
				 ops[0].mem.base != ZYDIS_REGISTER_RIP);
		return true;
	case ZYDIS_CATEGORY_COND_BR:
		fx->flow = FLOW_COND;
		branch_target(fx, in, ops, len);
		return true;
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSCALL:
		/* rsp is back where it was once control returns here. */
		return true;
	case ZYDIS_CATEGORY_PUSH:
		fx->kind = FX_ADJ;
		fx->arg = width;
		return true;
	case ZYDIS_CATEGORY_POP:
		if (is_reg_op(&ops[0], ZYDIS_REGISTER_RSP)) {
			fx->kind = FX_LOST;
			return true;
		}
		fx->kind = FX_ADJ;
		fx->arg = -width;
		fx->rbp_clobber = is_reg_op(&ops[0], ZYDIS_REGISTER_RBP);
		return true;
	default:
		return false;
	}
}

/* mov between rsp, rbp and the other registers; false for any other mov. */
static bool mov_effect(struct insn_fx *fx, const ZydisDecodedOperand *ops, bool after_push_rbp)
{
	if (is_reg_pair(ops, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSP) && after_push_rbp) {
		fx->kind = FX_FRAME_SET;
		return true;
	}
	if (is_reg_pair(ops, ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RBP)) {
		fx->kind = FX_FROM_RBP;
		fx->arg = 0;
		return true;
	}
	/*
	 * GCC may save rsp in a callee-saved register and restore it
	 * instead of popping the stack arguments of a call.
	 */
	if (is_reg64(&ops[1], ZYDIS_REGISTER_RSP) && is_gpr64(&ops[0])) {
		fx->kind = FX_ALIAS_SET;
		fx->arg = gpr_num(ops[0].reg.value);
		fx->rbp_clobber = is_reg64(&ops[0], ZYDIS_REGISTER_RBP);
		return true;
	}
	if (is_reg64(&ops[0], ZYDIS_REGISTER_RSP) && is_gpr64(&ops[1])) {
		fx->kind = FX_FROM_ALIAS;
		fx->arg = gpr_num(ops[1].reg.value);
		return true;
	}
	return false;
}

/* lea rsp, [...]: an adjustment, rbp-relative, or lost. */
static void lea_rsp_effect(struct insn_fx *fx, const ZydisDecodedInstruction *in,
			   const ZydisDecodedOperand *ops)
{
	const ZydisDecodedOperandMem *m = &ops[1].mem;

	fx->kind = FX_LOST;
	if (m->index != ZYDIS_REGISTER_NONE || in->address_width != 64)
		return;
	fx->arg = m->disp.value;
	if (m->base == ZYDIS_REGISTER_RSP) {
		fx->kind = FX_ADJ;
		fx->arg = -m->disp.value;
	} else if (m->base == ZYDIS_REGISTER_RBP) {
		fx->kind = FX_FROM_RBP;
	}
}

/* The instructions that move rsp or rbp in ways the walk follows; false for the rest. */
static bool mnemonic_effect(struct insn_fx *fx, const ZydisDecodedInstruction *in,
			    const ZydisDecodedOperand *ops, bool after_push_rbp)
{
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_UD2:
		fx->flow = FLOW_STOP;
		return true;
	case ZYDIS_MNEMONIC_ADD:
	case ZYDIS_MNEMONIC_SUB:
		if (is_reg64(&ops[0], ZYDIS_REGISTER_RSP) &&
		    ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			fx->kind = FX_ADJ;
			fx->arg = in->mnemonic == ZYDIS_MNEMONIC_SUB ? ops[1].imm.value.s :
								       -ops[1].imm.value.s;
			return true;
		}
		return false;
	case ZYDIS_MNEMONIC_MOV:
		return mov_effect(fx, ops, after_push_rbp);
	case ZYDIS_MNEMONIC_LEA:
		if (!is_reg64(&ops[0], ZYDIS_REGISTER_RSP))
			return false;
		lea_rsp_effect(fx, in, ops);
		return true;
	case ZYDIS_MNEMONIC_LEAVE:
		fx->kind = FX_LEAVE;
		return true;
	case ZYDIS_MNEMONIC_ENTER:
		fx->kind = FX_ENTER;
		fx->arg = (int64_t)ops[0].imm.value.u;
		/* Nested frames copy a variable number of frame pointers. */
		if (ops[1].imm.value.u != 0) {
			fx->kind = FX_LOST;
			fx->rbp_clobber = true;
		}
		return true;
	default:
		return false;
	}
}

/*
 * after_push_rbp: only `push rbp; mov rbp, rsp` (rbp saved at [rsp]) sets up
 * a frame the walk can follow; a lone `mov rbp, rsp` in frameless code takes
 * the address of a local, and [rbp] is then not a saved frame pointer.
 */
void frame_effect(struct insn_fx *fx, const ZydisDecodedInstruction *in,
		  const ZydisDecodedOperand *ops, size_t len, bool after_push_rbp)
{
	fx->kind = FX_NONE;
	fx->flow = FLOW_NEXT;
	fx->ends_prologue = ends_prologue(in, ops);
	note_gpr_writes(fx, in, ops);
	if (category_effect(fx, in, ops, len) || mnemonic_effect(fx, in, ops, after_push_rbp))
		return;
	if (writes_reg(in, ops, ZYDIS_REGISTER_RSP))
		fx->kind = FX_LOST;
	fx->rbp_clobber = writes_reg(in, ops, ZYDIS_REGISTER_RBP);
}

/* rsp := rbp + off */
static void frame_from_rbp(struct frame_state *s, int64_t off)
{
	if (!s->framed && s->alias_reg == KCSAND_REG_RBP - KCSAND_REG_RAX) {
		s->known = s->alias_known;
		s->delta = s->alias_delta - off;
		return;
	}
	if (!s->framed) {
		s->known = false;
		return;
	}
	s->known = s->frame_known;
	s->delta = s->frame_delta - off;
}

/* The state after an instruction, from the state before it. */
static struct frame_state frame_apply(struct frame_state s, const struct insn_fx *fx)
{
	if (s.alias_reg >= 0 && (fx->gpr_writes & (1u << s.alias_reg)))
		s.alias_reg = -1;

	switch (fx->kind) {
	case FX_ADJ:
		s.delta += fx->arg;
		break;
	case FX_FRAME_SET:
		s.framed = true;
		s.frame_known = s.known;
		s.frame_delta = s.delta;
		break;
	case FX_FROM_RBP:
		frame_from_rbp(&s, fx->arg);
		break;
	case FX_LEAVE:
		frame_from_rbp(&s, 0);
		s.delta -= 8;
		s.framed = false;
		break;
	case FX_ENTER:
		s.delta += 8;
		s.framed = true;
		s.frame_known = s.known;
		s.frame_delta = s.delta;
		s.delta += fx->arg;
		break;
	case FX_LOST:
		s.known = false;
		break;
	case FX_ALIAS_SET:
		s.alias_reg = (int8_t)fx->arg;
		s.alias_known = s.known;
		s.alias_delta = s.delta;
		break;
	case FX_FROM_ALIAS:
		if (s.alias_reg >= 0 && s.alias_reg == fx->arg) {
			s.known = s.alias_known;
			s.delta = s.alias_delta;
		} else {
			s.known = false;
		}
		break;
	default:
		break;
	}
	if (fx->rbp_clobber && fx->kind != FX_FRAME_SET)
		s.framed = false;
	return s;
}

/* Equal in every field that means something. */
static bool frame_equal(const struct frame_state *a, const struct frame_state *b)
{
	if (a->known != b->known || a->framed != b->framed || a->alias_reg != b->alias_reg)
		return false;
	if (a->known && a->delta != b->delta)
		return false;
	if (a->framed && (a->frame_known != b->frame_known ||
			  (a->frame_known && a->frame_delta != b->frame_delta)))
		return false;
	if (a->alias_reg >= 0 && (a->alias_known != b->alias_known ||
				  (a->alias_known && a->alias_delta != b->alias_delta)))
		return false;
	return true;
}

/*
 * Where paths meet, keep what they agree on.  Fields only ever go from
 * known to unknown, so the fixpoint comes after a few updates per
 * instruction.
 */
static struct frame_state frame_meet(struct frame_state a, const struct frame_state *b)
{
	if (!b->known || a.delta != b->delta)
		a.known = false;
	if (a.framed != b->framed) {
		/* One path set up the frame and the other did not: nothing holds. */
		a.framed = false;
		a.known = false;
	} else if (a.framed && (!b->frame_known || a.frame_delta != b->frame_delta)) {
		a.frame_known = false;
	}
	if (a.alias_reg != b->alias_reg)
		a.alias_reg = -1;
	else if (a.alias_reg >= 0 && (!b->alias_known || a.alias_delta != b->alias_delta))
		a.alias_known = false;
	return a;
}

int16_t frame_ra_off(const struct frame_state *s)
{
	if (s->framed || !s->known || s->delta < 0 || s->delta > INT16_MAX)
		return -1;
	return (int16_t)s->delta;
}

bool frame_stack_off(const struct frame_state *s, int base, int64_t disp, int64_t *off)
{
	if (base == KCSAND_REG_RSP && s->known) {
		*off = disp - s->delta;
		return true;
	}
	if (base != KCSAND_REG_RBP)
		return false;
	/* rbp was rsp when the frame was set up, or when rsp was copied to it. */
	if (s->framed && s->frame_known) {
		*off = disp - s->frame_delta;
		return true;
	}
	if (!s->framed && s->alias_reg == KCSAND_REG_RBP - KCSAND_REG_RAX && s->alias_known) {
		*off = disp - s->alias_delta;
		return true;
	}
	return false;
}

struct frame_ctx {
	const struct insn_fx *fx;
	struct frame_slot *slot;
	uint32_t *work;
	size_t n, nwork;
	bool weak;		/* guessed states: fill gaps, never override */
};

size_t insn_at(const struct insn_fx *fx, size_t n, uint32_t off)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fx[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && fx[lo].off == off ? lo : n;
}

int insn_successors(const struct insn_fx *fx, size_t n, size_t i, size_t next[2])
{
	int nn = 0;

	if (fx[i].flow == FLOW_NEXT || fx[i].flow == FLOW_COND)
		next[nn++] = i + 1;
	if ((fx[i].flow == FLOW_COND || fx[i].flow == FLOW_JUMP) && fx[i].has_target)
		next[nn++] = insn_at(fx, n, fx[i].target);
	return nn;
}

static void frame_merge(struct frame_ctx *c, size_t i, const struct frame_state *s)
{
	struct frame_slot *sl;

	if (i >= c->n)
		return;
	sl = &c->slot[i];
	if (sl->seen && c->weak)
		return;
	if (!sl->seen) {
		sl->s = *s;
		sl->seen = true;
	} else {
		struct frame_state m = frame_meet(sl->s, s);

		if (frame_equal(&m, &sl->s))
			return;
		sl->s = m;
	}
	if (!sl->queued) {
		sl->queued = true;
		c->work[c->nwork++] = (uint32_t)i;
	}
}

static void frame_propagate(struct frame_ctx *c)
{
	while (c->nwork) {
		size_t i = c->work[--c->nwork];
		const struct insn_fx *fx = &c->fx[i];
		struct frame_state out;

		c->slot[i].queued = false;
		out = frame_apply(c->slot[i].s, fx);
		if (fx->flow == FLOW_NEXT || fx->flow == FLOW_COND)
			frame_merge(c, i + 1, &out);
		if ((fx->flow == FLOW_COND || fx->flow == FLOW_JUMP) && fx->has_target)
			frame_merge(c, insn_at(c->fx, c->n, fx->target), &out);
	}
}

/*
 * Data flow over the direct branches from the entry, where the return
 * address is at [rsp].  Code no direct branch reaches is padding, the
 * target of a jump table (it gets the state at the dispatching jmp) or,
 * with none seen yet, of branches from elsewhere: it gets the state at
 * the end of the prologue, which is what compilers keep throughout the
 * body.  Such guesses only fill in what the data flow left open.
 */
int frame_analyze(const struct insn_fx *fx, size_t n, struct frame_slot **out)
{
	struct frame_ctx c = { .fx = fx, .n = n };
	struct frame_state entry = { .known = true, .alias_reg = -1 }, prologue = entry, fallback;

	c.slot = calloc(n ? n : 1, sizeof(*c.slot));
	c.work = malloc((n ? n : 1) * sizeof(*c.work));
	if (!c.slot || !c.work) {
		free(c.slot);
		free(c.work);
		return -ENOMEM;
	}

	for (size_t i = 0; i < n && !fx[i].ends_prologue; i++)
		prologue = frame_apply(prologue, &fx[i]);
	fallback = prologue;

	frame_merge(&c, 0, &entry);
	frame_propagate(&c);
	c.weak = true;
	for (size_t i = 0; i < n; i++) {
		if (!c.slot[i].seen) {
			frame_merge(&c, i, &fallback);
			frame_propagate(&c);
		}
		/* In the entry state, an indirect jmp is a tail call, not a dispatch. */
		if (fx[i].table_jmp && !frame_equal(&c.slot[i].s, &entry))
			fallback = c.slot[i].s;
	}
	free(c.work);
	*out = c.slot;
	return 0;
}

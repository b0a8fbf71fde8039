/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Instruction sites: decoding of x86-64 functions with Zydis into the
 * memory-access descriptors the BPF engine evaluates, and the ELF layer
 * (libelf) that finds the functions and maps sites to file offsets.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <Zydis/Zydis.h>

#include "decode.h"

/* ------------------------------------------------------------------------ */
/* Site vector                                                              */
/* ------------------------------------------------------------------------ */

int site_vec__push(struct site_vec *vec, const struct site *s)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? vec->cap * 2 : 64;
		struct site *v = realloc(vec->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		vec->v = v;
		vec->cap = cap;
	}
	vec->v[vec->n++] = *s;
	return 0;
}

void site_vec__free(struct site_vec *vec)
{
	free(vec->v);
	vec->v = NULL;
	vec->n = vec->cap = 0;
}

/* ------------------------------------------------------------------------ */
/* Registers                                                                */
/* ------------------------------------------------------------------------ */

static ZydisRegister reg64(ZydisRegister r)
{
	if (r == ZYDIS_REGISTER_NONE)
		return r;
	return ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
}

/*
 * Only full 64-bit GPRs and RIP can be evaluated by the BPF side; anything
 * else (32-bit address registers, vector indices) is reported as -1.
 */
static int kcsand_reg_of(ZydisRegister r)
{
	static const ZydisRegister gpr[] = {
		ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX, ZYDIS_REGISTER_RBX,
		ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI,
		ZYDIS_REGISTER_R8,  ZYDIS_REGISTER_R9,  ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
		ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R13, ZYDIS_REGISTER_R14, ZYDIS_REGISTER_R15,
	};

	if (r == ZYDIS_REGISTER_NONE)
		return KCSAND_REG_NONE;
	if (r == ZYDIS_REGISTER_RIP)
		return KCSAND_REG_RIP;
	for (size_t i = 0; i < sizeof(gpr) / sizeof(gpr[0]); i++)
		if (gpr[i] == r)
			return KCSAND_REG_RAX + (int)i;
	return -1;
}

/* A register's GPR number (encoding order), or -1. */
static int gpr_num(ZydisRegister r)
{
	int k = kcsand_reg_of(reg64(r));

	return k >= KCSAND_REG_RAX && k <= KCSAND_REG_R15 ? k - KCSAND_REG_RAX : -1;
}

static bool is_reg_op(const ZydisDecodedOperand *op, ZydisRegister r64)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER && reg64(op->reg.value) == r64;
}

/*
 * The frame analysis recognizes only full-width forms: a 32-bit `sub esp`
 * zero-extends rsp, which is caught as an unknown write to rsp instead.
 */
static bool is_reg64(const ZydisDecodedOperand *op, ZydisRegister r64)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER && op->reg.value == r64;
}

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

#define ACTION_ACCESS	(ZYDIS_OPERAND_ACTION_MASK_READ | ZYDIS_OPERAND_ACTION_MASK_WRITE)

/* ------------------------------------------------------------------------ */
/* Frame analysis                                                           */
/* ------------------------------------------------------------------------ */

/*
 * What is known about the stack at an instruction: the distance from rsp to
 * the return address (delta), and whether rbp holds this function's frame,
 * in which case the frame-pointer walk already finds the caller.
 */
struct frame_state {
	int64_t delta;
	int64_t frame_delta;	/* delta when the frame was set up: rsp == rbp then */
	int64_t alias_delta;	/* delta when rsp was copied to GPR alias_reg */
	bool known;
	bool framed;
	bool frame_known;
	bool alias_known;
	int8_t alias_reg;	/* GPR (encoding order) holding a copy of rsp, or -1 */
};

/* An instruction's effect on rsp/rbp, reduced to what the analysis needs. */
enum fx_kind {
	FX_NONE,
	FX_ADJ,		/* rsp -= arg: push, sub rsp, imm */
	FX_FRAME_SET,	/* mov rbp, rsp */
	FX_FROM_RBP,	/* rsp = rbp + arg: mov rsp, rbp; lea rsp, [rbp+arg] */
	FX_LEAVE,
	FX_ENTER,	/* enter arg, 0 */
	FX_LOST,	/* rsp changes by an amount that cannot be known */
	FX_ALIAS_SET,	/* mov GPR arg, rsp */
	FX_FROM_ALIAS,	/* mov rsp, GPR arg */
};

enum fx_flow {
	FLOW_NEXT,	/* falls through */
	FLOW_COND,	/* falls through or branches to target */
	FLOW_JUMP,	/* branches to target; without one: indirect or out of the function */
	FLOW_STOP,	/* ret, ud2 */
};

struct insn_fx {
	int64_t arg;
	uint32_t off;		/* from the function's start */
	uint32_t target;	/* FLOW_COND/FLOW_JUMP with has_target */
	uint16_t gpr_writes;	/* GPRs overwritten, bit n = encoding n */
	uint8_t kind;		/* enum fx_kind */
	uint8_t flow;		/* enum fx_flow */
	bool has_target;	/* the branch target is an offset inside the function */
	bool rbp_clobber;	/* rbp overwritten: it no longer holds our frame */
	bool ends_prologue;
	bool table_jmp;		/* indirect jmp that may dispatch inside the function */
};

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

static bool writes_reg(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
		       ZydisRegister r64)
{
	for (int i = 0; i < in->operand_count; i++)
		if (is_reg_op(&ops[i], r64) && (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			return true;
	return false;
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

/*
 * after_push_rbp: only `push rbp; mov rbp, rsp` (rbp saved at [rsp]) sets up
 * a frame the walk can follow; a lone `mov rbp, rsp` in frameless code takes
 * the address of a local, and [rbp] is then not a saved frame pointer.
 */
static void frame_effect(struct insn_fx *fx, const ZydisDecodedInstruction *in,
			 const ZydisDecodedOperand *ops, size_t len, bool after_push_rbp)
{
	int64_t width = in->operand_width / 8;

	fx->kind = FX_NONE;
	fx->flow = FLOW_NEXT;
	fx->ends_prologue = ends_prologue(in, ops);
	for (int i = 0; i < in->operand_count; i++) {
		int g = ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER ? gpr_num(ops[i].reg.value) : -1;

		if (g >= 0 && (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			fx->gpr_writes |= 1u << g;
	}
	/* Calls clobber the caller-saved registers (SysV ABI) without saying so. */
	if (in->meta.category == ZYDIS_CATEGORY_CALL)
		fx->gpr_writes |= 0x0fc7;	/* rax rcx rdx rsi rdi r8-r11 */

	switch (in->meta.category) {
	case ZYDIS_CATEGORY_RET:
		fx->flow = FLOW_STOP;
		return;
	case ZYDIS_CATEGORY_UNCOND_BR:
		fx->flow = FLOW_JUMP;
		branch_target(fx, in, ops, len);
		/* Through a GOT slot ([rip+x]) it is a tail call, not a jump table. */
		fx->table_jmp = ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER ||
				(ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY &&
				 ops[0].mem.base != ZYDIS_REGISTER_RIP);
		return;
	case ZYDIS_CATEGORY_COND_BR:
		fx->flow = FLOW_COND;
		branch_target(fx, in, ops, len);
		return;
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSCALL:
		/* rsp is back where it was once control returns here. */
		return;
	case ZYDIS_CATEGORY_PUSH:
		fx->kind = FX_ADJ;
		fx->arg = width;
		return;
	case ZYDIS_CATEGORY_POP:
		if (is_reg_op(&ops[0], ZYDIS_REGISTER_RSP)) {
			fx->kind = FX_LOST;
			return;
		}
		fx->kind = FX_ADJ;
		fx->arg = -width;
		fx->rbp_clobber = is_reg_op(&ops[0], ZYDIS_REGISTER_RBP);
		return;
	default:
		break;
	}

	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_UD2:
		fx->flow = FLOW_STOP;
		return;
	case ZYDIS_MNEMONIC_ADD:
	case ZYDIS_MNEMONIC_SUB:
		if (is_reg64(&ops[0], ZYDIS_REGISTER_RSP) &&
		    ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			fx->kind = FX_ADJ;
			fx->arg = in->mnemonic == ZYDIS_MNEMONIC_SUB ? ops[1].imm.value.s :
								       -ops[1].imm.value.s;
			return;
		}
		break;
	case ZYDIS_MNEMONIC_MOV:
		if (is_reg_pair(ops, ZYDIS_REGISTER_RBP, ZYDIS_REGISTER_RSP) && after_push_rbp) {
			fx->kind = FX_FRAME_SET;
			return;
		}
		if (is_reg_pair(ops, ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RBP)) {
			fx->kind = FX_FROM_RBP;
			fx->arg = 0;
			return;
		}
		/*
		 * GCC may save rsp in a callee-saved register and restore it
		 * instead of popping the stack arguments of a call.
		 */
		if (is_reg64(&ops[1], ZYDIS_REGISTER_RSP) && is_gpr64(&ops[0])) {
			fx->kind = FX_ALIAS_SET;
			fx->arg = gpr_num(ops[0].reg.value);
			fx->rbp_clobber = is_reg64(&ops[0], ZYDIS_REGISTER_RBP);
			return;
		}
		if (is_reg64(&ops[0], ZYDIS_REGISTER_RSP) && is_gpr64(&ops[1])) {
			fx->kind = FX_FROM_ALIAS;
			fx->arg = gpr_num(ops[1].reg.value);
			return;
		}
		break;
	case ZYDIS_MNEMONIC_LEA:
		if (is_reg64(&ops[0], ZYDIS_REGISTER_RSP)) {
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
			return;
		}
		break;
	case ZYDIS_MNEMONIC_LEAVE:
		fx->kind = FX_LEAVE;
		return;
	case ZYDIS_MNEMONIC_ENTER:
		fx->kind = FX_ENTER;
		fx->arg = (int64_t)ops[0].imm.value.u;
		/* Nested frames copy a variable number of frame pointers. */
		if (ops[1].imm.value.u != 0) {
			fx->kind = FX_LOST;
			fx->rbp_clobber = true;
		}
		return;
	default:
		break;
	}

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

static int16_t frame_ra_off(const struct frame_state *s)
{
	if (s->framed || !s->known || s->delta < 0 || s->delta > INT16_MAX)
		return -1;
	return (int16_t)s->delta;
}

struct frame_slot {
	struct frame_state s;
	bool seen;
	bool queued;
};

struct frame_ctx {
	const struct insn_fx *fx;
	struct frame_slot *slot;
	uint32_t *work;
	size_t n, nwork;
	bool weak;		/* guessed states: fill gaps, never override */
};

static size_t insn_at(const struct insn_fx *fx, size_t n, uint32_t off)
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
static int frame_analyze(const struct insn_fx *fx, size_t n, struct frame_slot **out)
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

/* ------------------------------------------------------------------------ */
/* Memory operands                                                          */
/* ------------------------------------------------------------------------ */

/* Instructions whose memory operand names a line or a bound, not data they access. */
static bool is_non_access(const ZydisDecodedInstruction *in)
{
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_NOP:
	case ZYDIS_CATEGORY_WIDENOP:
	case ZYDIS_CATEGORY_PREFETCH:
	case ZYDIS_CATEGORY_PREFETCHWT1:
	case ZYDIS_CATEGORY_CLFLUSHOPT:
	case ZYDIS_CATEGORY_CLWB:
	case ZYDIS_CATEGORY_CLDEMOTE:
	case ZYDIS_CATEGORY_MPX:
		return true;
	default:
		break;
	}
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_CLFLUSH:
	case ZYDIS_MNEMONIC_CLFLUSHOPT:
	case ZYDIS_MNEMONIC_CLWB:
	case ZYDIS_MNEMONIC_PREFETCHW:
	case ZYDIS_MNEMONIC_PREFETCHWT1:
		return true;
	default:
		return false;
	}
}

/*
 * bt/bts/btr/btc with a register bit offset address memory far beyond the
 * operand (base + offset / 8), which the site descriptor cannot express.
 */
static bool is_bitstring_reg(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_BT:
	case ZYDIS_MNEMONIC_BTS:
	case ZYDIS_MNEMONIC_BTR:
	case ZYDIS_MNEMONIC_BTC:
		return ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER;
	default:
		return false;
	}
}

/*
 * Hidden memory operands other than the stack slots of push/pop/call/ret/
 * enter/leave are data accesses (string ops, xlat, maskmov*) we cannot probe.
 */
static bool has_implicit_data_access(const ZydisDecodedInstruction *in,
				     const ZydisDecodedOperand *ops)
{
	if (in->meta.category == ZYDIS_CATEGORY_STRINGOP ||
	    in->meta.category == ZYDIS_CATEGORY_IOSTRINGOP)
		return true;
	for (int i = 0; i < in->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		ZydisRegister base;

		if (op->visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT ||
		    op->type != ZYDIS_OPERAND_TYPE_MEMORY || op->mem.type != ZYDIS_MEMOP_TYPE_MEM ||
		    !(op->actions & ACTION_ACCESS))
			continue;
		base = reg64(op->mem.base);
		if (base == ZYDIS_REGISTER_RSP || base == ZYDIS_REGISTER_RBP)
			continue;
		return true;
	}
	return false;
}

enum site_verdict {
	SITE_KEEP,
	SITE_IGNORE,		/* no data access: not counted */
	SITE_STACK,
	SITE_TLS,
	SITE_UNENCODABLE,
};

static enum site_verdict classify(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
				  const struct decode_opts *opts, struct site *site)
{
	const ZydisDecodedOperand *mop = NULL;
	struct kcsand_site *d = &site->desc;
	int base, index;
	unsigned int size;

	for (int i = 0; i < in->operand_count; i++) {
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    ops[i].visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT) {
			mop = &ops[i];
			break;
		}
	}
	if (!mop)
		return has_implicit_data_access(in, ops) ? SITE_UNENCODABLE : SITE_IGNORE;

	if (mop->mem.type == ZYDIS_MEMOP_TYPE_VSIB)
		return SITE_UNENCODABLE;
	if (mop->mem.type != ZYDIS_MEMOP_TYPE_MEM || is_non_access(in) ||
	    !(mop->actions & ACTION_ACCESS))
		return SITE_IGNORE;
	if (has_implicit_data_access(in, ops))
		return SITE_UNENCODABLE;

	/*
	 * In user space fs is the TLS block, thread-private by construction;
	 * gs is unused by Linux user space, and in the kernel it is per-CPU.
	 */
	if (mop->mem.segment == ZYDIS_REGISTER_FS && !opts->keep_tls)
		return SITE_TLS;
	if (mop->mem.segment == ZYDIS_REGISTER_GS && (opts->skip_gs || !opts->keep_tls))
		return SITE_TLS;

	if (in->address_width != 64)
		return SITE_UNENCODABLE;
	/*
	 * Uprobes also refuse the es/cs/ds/ss segment-override prefix bytes,
	 * which 64-bit mode ignores (so Zydis does not flag them): check the
	 * raw bytes.
	 */
	if (!opts->probe_locked) {
		for (int i = 0; i < in->raw.prefix_count; i++) {
			ZyanU8 p = in->raw.prefixes[i].value;

			if (p == 0x26 || p == 0x2e || p == 0x36 || p == 0x3e)
				return SITE_UNENCODABLE;
		}
	}
	base = kcsand_reg_of(mop->mem.base);
	index = kcsand_reg_of(mop->mem.index);
	if (base < 0 || index < 0 || index == KCSAND_REG_RIP)
		return SITE_UNENCODABLE;
	if ((base == KCSAND_REG_RSP || base == KCSAND_REG_RBP) && !opts->keep_stack)
		return SITE_STACK;

	size = mop->size / 8;
	if (size == 0 || size > KCSAND_MAX_ACCESS || mop->size % 8 || is_bitstring_reg(in, ops))
		return SITE_UNENCODABLE;

	d->base = (uint8_t)base;
	d->index = (uint8_t)index;
	d->scale = index ? mop->mem.scale : 1;
	d->disp = mop->mem.disp.has_displacement ? mop->mem.disp.value : 0;
	d->size = (uint8_t)size;
	d->insn_len = in->length;
	d->flags = 0;
	if (mop->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
		d->flags |= KCSAND_SITE_READ;
	if (mop->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
		d->flags |= KCSAND_SITE_WRITE;

	site->reason = MARK_NONE;
	if (in->attributes & ZYDIS_ATTRIB_HAS_LOCK) {
		/*
		 * x86 uprobes refuse lock-prefixed instructions, so a locked
		 * access is probed at the next instruction: that needs its
		 * address registers to survive it (cmpxchg writes rax, xadd
		 * its source).
		 */
		if (!opts->probe_locked &&
		    ((mop->mem.base != ZYDIS_REGISTER_NONE && mop->mem.base != ZYDIS_REGISTER_RIP &&
		      writes_reg(in, ops, mop->mem.base)) ||
		     (mop->mem.index != ZYDIS_REGISTER_NONE && writes_reg(in, ops, mop->mem.index))))
			return SITE_UNENCODABLE;
		if (!opts->probe_locked)
			d->probe_delta = in->length;
		site->reason = MARK_LOCK_PREFIX;
	}
	else if (in->mnemonic == ZYDIS_MNEMONIC_XCHG)
		site->reason = MARK_XCHG;
	if (site->reason != MARK_NONE)
		d->flags |= KCSAND_SITE_MARKED;
	site->insn_reason = site->reason;	/* what mark__apply() starts from */
	return SITE_KEEP;
}

static int fx_push(struct insn_fx **v, size_t *n, size_t *cap, const struct insn_fx *fx)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct insn_fx *nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = *fx;
	return 0;
}

int decode_function(const uint8_t *code, size_t len, uint64_t vaddr, uint32_t func_idx,
		    const struct decode_opts *opts, struct site_vec *out,
		    struct decode_stats *stats)
{
	static const struct decode_opts defaults;
	struct decode_stats dummy = {};
	struct insn_fx *fx = NULL;
	struct frame_slot *slot = NULL;
	size_t nfx = 0, capfx = 0, off = 0, n0 = out->n;
	bool after_push_rbp = false;
	ZydisDecoder dec;
	int err = 0;

	if (!code && len)
		return -EINVAL;
	if (len > UINT32_MAX)
		return -E2BIG;
	if (!opts)
		opts = &defaults;
	if (!stats)
		stats = &dummy;

	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64))) {
		fprintf(stderr, "kcsand: decoder: cannot initialize Zydis\n");
		return -EINVAL;
	}
	stats->funcs++;

	while (off < len) {
		ZydisDecodedInstruction in;
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
		struct insn_fx f = { .off = (uint32_t)off };
		struct site site = {};

		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, len - off, &in, ops))) {
			/* Resynchronizing would mean guessing instruction boundaries. */
			stats->decode_errors++;
			break;
		}
		if (opts->stop_at_padding &&
		    (in.mnemonic == ZYDIS_MNEMONIC_INT3 ||
		     (in.length == 2 && code[off] == 0x00 && code[off + 1] == 0x00)))
			break;
		stats->insns++;

		switch (classify(&in, ops, opts, &site)) {
		case SITE_KEEP:
			/* A deferred probe must land inside the function. */
			if (off + site.desc.probe_delta >= len) {
				stats->unencodable++;
				break;
			}
			site.vaddr = vaddr + off;
			site.file_off = site.vaddr;
			site.func = func_idx;
			site.desc.ra_off = -1;	/* set by the frame analysis below */
			err = site_vec__push(out, &site);
			if (err)
				goto out;
			stats->sites++;
			if (site.desc.flags & KCSAND_SITE_MARKED)
				stats->marked++;
			break;
		case SITE_STACK:
			stats->skipped_stack++;
			break;
		case SITE_TLS:
			stats->skipped_tls++;
			break;
		case SITE_UNENCODABLE:
			stats->unencodable++;
			break;
		case SITE_IGNORE:
			break;
		}

		frame_effect(&f, &in, ops, len, after_push_rbp);
		/* GCC may schedule unrelated instructions in between. */
		if (in.mnemonic == ZYDIS_MNEMONIC_PUSH && is_reg64(&ops[0], ZYDIS_REGISTER_RBP))
			after_push_rbp = true;
		else if (writes_reg(&in, ops, ZYDIS_REGISTER_RSP) ||
			 writes_reg(&in, ops, ZYDIS_REGISTER_RBP) || f.flow != FLOW_NEXT)
			after_push_rbp = false;
		err = fx_push(&fx, &nfx, &capfx, &f);
		if (err)
			goto out;
		off += in.length;
	}

	if (out->n == n0) {
		stats->funcs_without_sites++;
		goto out;
	}
	err = frame_analyze(fx, nfx, &slot);
	if (err)
		goto out;
	for (size_t i = n0; i < out->n; i++) {
		size_t k = insn_at(fx, nfx, (uint32_t)(out->v[i].vaddr - vaddr));

		out->v[i].desc.ra_off = k < nfx ? frame_ra_off(&slot[k].s) : -1;
	}
out:
	free(slot);
	free(fx);
	return err;
}

/* ------------------------------------------------------------------------ */
/* ELF objects                                                              */
/* ------------------------------------------------------------------------ */

struct load_seg {
	uint64_t vaddr, off, filesz;
	bool exec;
};

struct obj_priv {
	int fd;
	Elf *elf;
	struct load_seg *segs;
	size_t nr_segs;
	size_t *func_scn;	/* section index of each funcs[] entry */
};

/* A symbol candidate before aliases at the same address are merged. */
struct func_cand {
	const char *name;
	uint64_t vaddr, size;
	size_t scn;
	int rank;		/* binding preference: lower wins */
};

static int bind_rank(int bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

static int cand_cmp(const void *pa, const void *pb)
{
	const struct func_cand *a = pa, *b = pb;
	int c;

	if (a->vaddr != b->vaddr)
		return a->vaddr < b->vaddr ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	c = strcmp(a->name, b->name);
	if (c)
		return c;
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return 0;
}

static int load_segments(struct target_obj *obj, struct obj_priv *p)
{
	size_t phnum;

	if (elf_getphdrnum(p->elf, &phnum)) {
		fprintf(stderr, "kcsand: %s: cannot read program headers: %s\n", obj->path,
			elf_errmsg(-1));
		return -ENOEXEC;
	}
	p->segs = calloc(phnum ? phnum : 1, sizeof(*p->segs));
	if (!p->segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(p->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		p->segs[p->nr_segs++] = (struct load_seg){
			.vaddr = ph.p_vaddr, .off = ph.p_offset, .filesz = ph.p_filesz,
			.exec = ph.p_flags & PF_X,
		};
	}
	return 0;
}

static bool scn_is_code(Elf *elf, size_t idx, GElf_Shdr *sh)
{
	Elf_Scn *scn = elf_getscn(elf, idx);

	return scn && gelf_getshdr(scn, sh) && sh->sh_type == SHT_PROGBITS &&
	       (sh->sh_flags & SHF_EXECINSTR);
}

static Elf_Scn *find_symtab(Elf *elf, Elf32_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	return NULL;
}

static int load_funcs(struct target_obj *obj, struct obj_priv *p)
{
	Elf_Scn *symscn, *xscn = NULL;
	Elf_Data *data, *xdata = NULL;
	struct func_cand *cand = NULL;
	size_t nsyms, ncand = 0, nout = 0, symidx;
	GElf_Shdr symsh, sh;
	int err = 0;

	symscn = find_symtab(p->elf, SHT_SYMTAB);
	if (!symscn)
		symscn = find_symtab(p->elf, SHT_DYNSYM);
	if (!symscn)
		return 0;	/* no symbols: nothing to select, not an error */

	symidx = elf_ndxscn(symscn);
	while ((xscn = elf_nextscn(p->elf, xscn))) {
		if (gelf_getshdr(xscn, &sh) && sh.sh_type == SHT_SYMTAB_SHNDX &&
		    sh.sh_link == symidx) {
			xdata = elf_getdata(xscn, NULL);
			break;
		}
	}

	if (!gelf_getshdr(symscn, &symsh) || !(data = elf_getdata(symscn, NULL)) ||
	    !symsh.sh_entsize) {
		fprintf(stderr, "kcsand: %s: cannot read symbol table: %s\n", obj->path,
			elf_errmsg(-1));
		return -ENOEXEC;
	}
	nsyms = symsh.sh_size / symsh.sh_entsize;
	cand = calloc(nsyms ? nsyms : 1, sizeof(*cand));
	if (!cand)
		return -ENOMEM;

	for (size_t i = 0; i < nsyms; i++) {
		GElf_Sym sym;
		Elf32_Word xndx = 0;
		size_t shndx;
		const char *name;

		if (!gelf_getsymshndx(data, xdata, (int)i, &sym, &xndx))
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size)
			continue;
		shndx = sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx;
		if (shndx == SHN_UNDEF || (shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX))
			continue;
		if (!scn_is_code(p->elf, shndx, &sh))
			continue;
		/* The bytes are read from the section: the whole function must lie in it. */
		if (sym.st_value < sh.sh_addr || sym.st_size > sh.sh_size ||
		    sym.st_value - sh.sh_addr > sh.sh_size - sym.st_size)
			continue;
		name = elf_strptr(p->elf, symsh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		cand[ncand++] = (struct func_cand){
			.name = name, .vaddr = sym.st_value, .size = sym.st_size, .scn = shndx,
			.rank = bind_rank(GELF_ST_BIND(sym.st_info)),
		};
	}

	qsort(cand, ncand, sizeof(*cand), cand_cmp);

	obj->funcs = calloc(ncand ? ncand : 1, sizeof(*obj->funcs));
	p->func_scn = calloc(ncand ? ncand : 1, sizeof(*p->func_scn));
	if (!obj->funcs || !p->func_scn) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ncand; i++) {
		/* Sorted best alias first: keep one entry per address. */
		if (nout && obj->funcs[nout - 1].vaddr == cand[i].vaddr)
			continue;
		obj->funcs[nout].name = strdup(cand[i].name);
		if (!obj->funcs[nout].name) {
			err = -ENOMEM;
			goto out;
		}
		obj->funcs[nout].vaddr = cand[i].vaddr;
		obj->funcs[nout].size = cand[i].size;
		p->func_scn[nout] = cand[i].scn;
		nout++;
	}
out:
	obj->nr_funcs = nout;
	free(cand);
	return err;
}

int target_obj__open(const char *path, struct target_obj **out)
{
	struct target_obj *obj;
	struct obj_priv *p;
	GElf_Ehdr eh;
	int err;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "kcsand: libelf: %s\n", elf_errmsg(-1));
		return -EINVAL;
	}

	obj = calloc(1, sizeof(*obj));
	p = calloc(1, sizeof(*p));
	if (!obj || !p || !(obj->path = strdup(path))) {
		free(p);
		free(obj);
		return -ENOMEM;
	}
	p->fd = -1;
	obj->priv = p;

	p->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (p->fd < 0) {
		err = -errno;
		fprintf(stderr, "kcsand: cannot open %s: %s\n", path, strerror(errno));
		goto err;
	}
	/*
	 * read(), not mmap: the kernel installs existing uprobes into every
	 * mapping of the file that may execute, a read-only one included, so
	 * an mmapped copy of an already probed object shows int3 bytes.
	 */
	p->elf = elf_begin(p->fd, ELF_C_READ, NULL);
	if (!p->elf || elf_kind(p->elf) != ELF_K_ELF) {
		fprintf(stderr, "kcsand: %s: not an ELF file\n", path);
		err = -ENOEXEC;
		goto err;
	}
	if (gelf_getclass(p->elf) != ELFCLASS64 || !gelf_getehdr(p->elf, &eh) ||
	    eh.e_machine != EM_X86_64) {
		fprintf(stderr, "kcsand: %s: not an x86-64 ELF object\n", path);
		err = -ENOEXEC;
		goto err;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		fprintf(stderr, "kcsand: %s: not an x86-64 ELF object (%s)\n", path,
			"neither executable nor shared object");
		err = -ENOEXEC;
		goto err;
	}
	obj->pie = eh.e_type == ET_DYN;

	err = load_segments(obj, p);
	if (err)
		goto err;
	err = load_funcs(obj, p);
	if (err)
		goto err;

	*out = obj;
	return 0;
err:
	target_obj__free(obj);
	return err;
}

int target_obj__vaddr_to_off(const struct target_obj *obj, uint64_t vaddr, uint64_t *off)
{
	const struct obj_priv *p = obj->priv;
	const struct load_seg *hit = NULL;

	/* Segments do not overlap in practice; if they do, code wants the executable one. */
	for (size_t i = 0; i < p->nr_segs; i++) {
		const struct load_seg *s = &p->segs[i];

		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		if (!hit || (s->exec && !hit->exec))
			hit = s;
	}
	if (!hit)
		return -ERANGE;
	*off = vaddr - hit->vaddr + hit->off;
	return 0;
}

/*
 * The comma-separated globs as one buffer of NUL-terminated patterns,
 * blanks around them trimmed; *npat = 0 selects everything.
 */
static char *globs_split(const char *globs, size_t *npat)
{
	char *buf = strdup(globs ? globs : ""), *w = buf;
	const char *g = globs ? globs : "";

	*npat = 0;
	if (!buf)
		return NULL;
	for (;;) {
		const char *end = strchrnul(g, ',');
		size_t n = (size_t)(end - g);

		while (n && (*g == ' ' || *g == '\t')) {
			g++;
			n--;
		}
		while (n && (g[n - 1] == ' ' || g[n - 1] == '\t'))
			n--;
		if (n) {
			memmove(w, g, n);
			w[n] = '\0';
			w += n + 1;
			(*npat)++;
		}
		if (!*end)
			break;
		g = end + 1;
	}
	return buf;
}

static bool name_matches(const char *name, const char *pats, size_t npat)
{
	if (!npat)
		return true;
	for (size_t i = 0; i < npat; i++, pats += strlen(pats) + 1)
		if (!fnmatch(pats, name, 0))
			return true;
	return false;
}

int target_obj__decode(struct target_obj *obj, const char *globs, const struct decode_opts *opts)
{
	struct obj_priv *p = obj->priv;
	int matched = 0, err = 0;
	size_t npat;
	char *pats;

	obj->sites.n = 0;
	memset(&obj->stats, 0, sizeof(obj->stats));
	pats = globs_split(globs, &npat);
	if (!pats)
		return -ENOMEM;

	for (size_t i = 0; i < obj->nr_funcs && !err; i++) {
		const struct elf_func *f = &obj->funcs[i];
		GElf_Shdr sh;
		Elf_Scn *scn;
		Elf_Data *data;
		size_t start = obj->sites.n;

		if (!name_matches(f->name, pats, npat))
			continue;
		matched++;

		scn = elf_getscn(p->elf, p->func_scn[i]);
		data = scn ? elf_getdata(scn, NULL) : NULL;
		if (!data || !gelf_getshdr(scn, &sh) || !data->d_buf ||
		    f->vaddr - sh.sh_addr + f->size > data->d_size) {
			fprintf(stderr, "kcsand: %s: %s: cannot read code: %s\n", obj->path,
				f->name, elf_errmsg(-1));
			err = -EIO;
			break;
		}
		err = decode_function((const uint8_t *)data->d_buf + (f->vaddr - sh.sh_addr),
				      f->size, f->vaddr, (uint32_t)i, opts, &obj->sites,
				      &obj->stats);

		for (size_t j = start; j < obj->sites.n && !err; j++) {
			struct site *s = &obj->sites.v[j];

			if (target_obj__vaddr_to_off(obj, s->vaddr, &s->file_off)) {
				fprintf(stderr, "kcsand: %s: %s: 0x%" PRIx64 ": %s\n", obj->path,
					f->name, s->vaddr, "in no loadable segment");
				err = -ERANGE;
			}
		}
	}
	free(pats);
	return err ? err : matched;
}

const struct elf_func *target_obj__func_at(const struct target_obj *obj, uint64_t vaddr)
{
	size_t lo = 0, hi = obj->nr_funcs;

	/* Find the last function starting at or below vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (obj->funcs[mid].vaddr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (vaddr - obj->funcs[lo - 1].vaddr < obj->funcs[lo - 1].size)
		return &obj->funcs[lo - 1];
	return NULL;
}

void target_obj__free(struct target_obj *obj)
{
	struct obj_priv *p;

	if (!obj)
		return;
	p = obj->priv;
	if (p) {
		if (p->elf)
			elf_end(p->elf);
		if (p->fd >= 0)
			close(p->fd);
		free(p->segs);
		free(p->func_scn);
		free(p);
	}
	for (size_t i = 0; i < obj->nr_funcs; i++)
		free(obj->funcs[i].name);
	free(obj->funcs);
	site_vec__free(&obj->sites);
	free(obj->path);
	free(obj);
}

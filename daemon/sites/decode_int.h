/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Private to the instruction decoder (decode.c, frame.c): the Zydis
 * register helpers both use, and the frame analysis that decode__function()
 * runs over a function's instructions to give each site its return-address
 * offset (struct kcsand_site::ra_off).
 */
#ifndef KCSAND_DECODE_INT_H
#define KCSAND_DECODE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <Zydis/Zydis.h>

#include "decode.h"

/* ------------------------------------------------------------------------ */
/* Registers                                                                */
/* ------------------------------------------------------------------------ */

static inline ZydisRegister reg64(ZydisRegister r)
{
	if (r == ZYDIS_REGISTER_NONE)
		return r;
	return ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
}

/*
 * Only full 64-bit GPRs and RIP can be evaluated by the BPF side; anything
 * else (32-bit address registers, vector indices) is reported as -1.
 */
static inline int kcsand_reg_of(ZydisRegister r)
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
static inline int gpr_num(ZydisRegister r)
{
	int k = kcsand_reg_of(reg64(r));

	return k >= KCSAND_REG_RAX && k <= KCSAND_REG_R15 ? k - KCSAND_REG_RAX : -1;
}

static inline bool is_reg_op(const ZydisDecodedOperand *op, ZydisRegister r64)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER && reg64(op->reg.value) == r64;
}

/*
 * The frame analysis recognizes only full-width forms: a 32-bit `sub esp`
 * zero-extends rsp, which is caught as an unknown write to rsp instead.
 */
static inline bool is_reg64(const ZydisDecodedOperand *op, ZydisRegister r64)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER && op->reg.value == r64;
}

static inline bool writes_reg(const ZydisDecodedInstruction *in,
			      const ZydisDecodedOperand *ops, ZydisRegister r64)
{
	for (int i = 0; i < in->operand_count; i++)
		if (is_reg_op(&ops[i], r64) && (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			return true;
	return false;
}

/* ------------------------------------------------------------------------ */
/* Frame analysis (frame.c)                                                 */
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

struct frame_slot {
	struct frame_state s;
	bool seen;
	bool queued;
};

/*
 * The effect of one decoded instruction at fx->off (set by the caller) of a
 * function len bytes long; after_push_rbp: a push rbp came before it, with
 * no branch and no other write to rsp or rbp in between.
 */
void frame_effect(struct insn_fx *fx, const ZydisDecodedInstruction *in,
		  const ZydisDecodedOperand *ops, size_t len, bool after_push_rbp);
/* The state at each of the n instructions (*out, n slots, freed by the caller); 0 or -ENOMEM. */
int frame_analyze(const struct insn_fx *fx, size_t n, struct frame_slot **out);
/* The return address's offset from rsp in this state, or -1 (framed or unknown). */
int16_t frame_ra_off(const struct frame_state *s);
/* The index of the instruction at offset off, or n when none starts there. */
size_t insn_at(const struct insn_fx *fx, size_t n, uint32_t off);
/*
 * The instructions control may reach from instruction i by fall-through and
 * direct branch, in next[] (n when a target starts no instruction); their count.
 */
int insn_successors(const struct insn_fx *fx, size_t n, size_t i, size_t next[2]);
/*
 * The stack address base+disp (base KCSAND_REG_RSP or KCSAND_REG_RBP) as an
 * offset from the return address's slot, in *off: false where the state
 * does not tell (rbp neither the frame nor a copy of rsp, rsp unknown).
 */
bool frame_stack_off(const struct frame_state *s, int base, int64_t disp, int64_t *off);

/* ------------------------------------------------------------------------ */
/* Stack slots whose address escapes (escape.c)                             */
/* ------------------------------------------------------------------------ */

/* A function's escaped slots: offsets from the return address's slot, sorted. */
struct stack_escapes {
	int64_t *off;
	size_t n, cap;
};

/* Add to out every slot whose address a lea takes and passes on; 0 or -errno. */
int escape_scan(ZydisDecoder *dec, const uint8_t *code, size_t len, const struct insn_fx *fx,
		size_t nfx, const struct frame_slot *slot, struct stack_escapes *out);
/* Whether size bytes at frame offset off lie in an escaped slot. */
bool escape_covers(const struct stack_escapes *e, int64_t off, unsigned int size);
void escape_free(struct stack_escapes *e);

/* ------------------------------------------------------------------------ */
/* Compare-and-swap loops (casloop.c)                                       */
/* ------------------------------------------------------------------------ */

/*
 * cas, the site of the lock cmpxchg at instruction kc, has just been
 * decoded: mark the plain load among the function's sites already in out
 * that reads its address and feeds its loop (MARK_CAS_LOOP).
 */
void cas_loop_mark(ZydisDecoder *dec, const uint8_t *code, uint64_t vaddr,
		   const struct insn_fx *fx, size_t nfx, size_t kc, const struct site *cas,
		   struct site_vec *out, struct decode_stats *stats);

/* ------------------------------------------------------------------------ */
/* Spin-wait loads (spinwait.c)                                             */
/* ------------------------------------------------------------------------ */

/*
 * site, the plain load at instruction kl, is marked an acquire that teaches
 * its address (MARK_SPIN_WAIT) when a loop polls it.  opts->call_name, with
 * vaddr the function's address, names the loop's calls.
 */
void spin_wait_mark(ZydisDecoder *dec, const uint8_t *code, size_t len, uint64_t vaddr,
		    const struct decode_opts *opts, const struct insn_fx *fx,
		    const struct frame_slot *slot, size_t nfx, size_t kl, struct site *site,
		    struct decode_stats *stats);

#endif

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which instructions x86 uprobes refuse.
 *
 * Before a uprobe takes an instruction, the kernel looks its opcode byte up
 * in tables of its own and answers ENOTSUPP for the rest.  It uses the byte
 * alone, also for VEX and EVEX instructions, whose bytes mean something
 * else there: `vmovdqu (%rsi),%ymm0` (VEX 6f, the byte of the legacy `outs`)
 * is refused.  A refused site attached before the program maps its file is
 * skipped in silence at the mmap, but a uprobe_multi link made while the
 * program runs fails as a whole: the sampler's re-attach of a static
 * glibc's AVX string functions failed every turn, so nothing was ever
 * disarmed and the program ran thousands of times its native time.
 *
 * The tables below are the kernel's refusals for the instructions compilers
 * emit with a memory operand, checked on Linux 6.18 here with a perf uprobe
 * per site of a static glibc (VEX/EVEX 6e, 6f, d6, e7, ef and map-3 1f, 3f
 * refused; 25, 3b, 3e, da taken; legacy 0f38/0f3a and 2-byte SSE taken).
 * Where a byte's fate was not seen, the entry follows the kernel's table
 * for invalid and privileged opcodes: a site left out costs one site, a
 * site kept that the kernel refuses costs the sampler.  Asking the kernel
 * at run time was tried: each perf uprobe's close waits for a grace period,
 * about a second apiece on a loaded machine.
 */
#include <stdint.h>

#include "uprobe_refusal.h"

#define BIT(b) (1ull << ((b) & 63))

/* Opcode bytes refused for VEX, EVEX and XOP instructions: the 1-byte table's holes. */
static const uint64_t vex_refused[4] = {
	/* 00-3f: push/pop es, cs, ss, ds; daa, das, aaa, aas (invalid in 64-bit mode) */
	BIT(0x06) | BIT(0x07) | BIT(0x0e) | BIT(0x16) | BIT(0x17) | BIT(0x1e) | BIT(0x1f) |
		BIT(0x27) | BIT(0x2f) | BIT(0x37) | BIT(0x3f),
	/* 40-7f: pusha, popa, bound; ins, outs */
	BIT(0x60) | BIT(0x61) | BIT(0x62) | BIT(0x6c) | BIT(0x6d) | BIT(0x6e) | BIT(0x6f),
	/* 80-bf: the 82 alias, call far */
	BIT(0x82) | BIT(0x9a),
	/* c0-ff: les/lds, int3, int, into, iret, aam, aad, salc, in, out, lock, int1, hlt, cli, sti */
	BIT(0xc4) | BIT(0xc5) | BIT(0xcc) | BIT(0xcd) | BIT(0xce) | BIT(0xcf) | BIT(0xd4) |
		BIT(0xd5) | BIT(0xd6) | BIT(0xe4) | BIT(0xe5) | BIT(0xe6) | BIT(0xe7) | BIT(0xea) |
		BIT(0xec) | BIT(0xed) | BIT(0xee) | BIT(0xef) | BIT(0xf0) | BIT(0xf1) | BIT(0xf4) |
		BIT(0xfa) | BIT(0xfb),
};

/* Second bytes refused after 0f: the 2-byte table's holes. */
static const uint64_t twobyte_refused[4] = {
	/* 00-3f: system insns, prefetch hints, moves to debug/test regs, wrmsr, sysenter... */
	0x3fffull | BIT(0x18) | BIT(0x24) | BIT(0x25) | BIT(0x26) | BIT(0x27) | BIT(0x30) |
		BIT(0x34) | BIT(0x35) | BIT(0x36) | BIT(0x37) | BIT(0x39) | BIT(0x3b) |
		BIT(0x3c) | BIT(0x3d) | BIT(0x3e) | BIT(0x3f),
	/* 40-7f: vmread/vmwrite, extrq/insertq, haddp/hsubp */
	BIT(0x78) | BIT(0x79) | BIT(0x7a) | BIT(0x7b) | BIT(0x7c) | BIT(0x7d),
	/* 80-bf: rsm, group 15 (fxsave, ldmxcsr, xsave, clflush), jmpe/popcnt */
	BIT(0xa6) | BIT(0xa7) | BIT(0xae) | BIT(0xb8),
	/* c0-ff: addsubp, lddqu, ud0 */
	BIT(0xd0) | BIT(0xf0) | BIT(0xff),
};

static bool in_set(const uint64_t set[4], uint8_t op)
{
	return set[op >> 6] & BIT(op);
}

bool uprobe_refusal__refuses(enum uprobe_insn_kind kind, uint8_t opcode)
{
	switch (kind) {
	case UPROBE_INSN_VEX:
		return in_set(vex_refused, opcode);
	case UPROBE_INSN_TWO_BYTE:
		return in_set(twobyte_refused, opcode);
	default:
		return false;
	}
}

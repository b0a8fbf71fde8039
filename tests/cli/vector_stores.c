// SPDX-License-Identifier: GPL-2.0-only
/*
 * Vector loads and stores under kcsanctl's probes: the program checks that
 * each copied what it should.  The kernel's probes emulate some VEX/EVEX
 * opcodes as the legacy branch, push or nop of the same byte (VEX 0f 7f,
 * vmovdqu to memory, as jg): with a probe on one, its store never happens.
 * Others they refuse (VEX 6f, vmovdqu from memory, the byte of outs): a
 * uprobe_multi link holding one fails while the program runs, so the
 * sampler's re-attach did, every turn.
 * Exits 0 when every copy is right, 1 otherwise (naming which), 2 without AVX.
 *
 *   vector_stores [ROUNDS]      (100 by default)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char src[65] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!?";
static char dst[65];

#define COPY(name, insns, clobber)						\
	__attribute__((noinline, noipa)) void name(char *d, const char *s)	\
	{									\
		asm volatile(insns :: "r"(d), "r"(s) : "memory", clobber);	\
	}

/* Each probed: a VEX load (probed, run out of line), then a store. */
COPY(copy_vex_ymm, "vmovdqu (%1), %%ymm0\n\tvmovdqu %%ymm0, (%0)", "xmm0")
COPY(copy_vex_xmm, "vmovdqu (%1), %%xmm0\n\tvmovdqu %%xmm0, (%0)", "xmm0")
COPY(copy_vex_q, "vmovq (%1), %%xmm0\n\tvmovq %%xmm0, (%0)", "xmm0")
COPY(copy_sse, "movdqu (%1), %%xmm0\n\tmovdqu %%xmm0, (%0)", "xmm0")

static int check(const char *name, void (*copy)(char *, const char *), size_t n)
{
	memset(dst, 0, sizeof(dst));
	copy(dst, src);
	if (!memcmp(dst, src, n))
		return 0;
	fprintf(stderr, "vector_stores: %s copied '%.*s', want '%.*s'\n", name, (int)n, dst,
		(int)n, src);
	return 1;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100;
	int bad = 0;

	if (!__builtin_cpu_supports("avx")) {
		fprintf(stderr, "vector_stores: this CPU has no AVX\n");
		return 2;
	}
	/*
	 * Several rounds: the site sampler keeps every site armed in its
	 * warm-up; many more take it past the warm-up, to re-attach.
	 */
	for (long i = 0; i < rounds; i++) {
		bad |= check("copy_vex_ymm", copy_vex_ymm, 32);
		bad |= check("copy_vex_xmm", copy_vex_xmm, 16);
		bad |= check("copy_vex_q", copy_vex_q, 8);
		bad |= check("copy_sse", copy_sse, 16);
		if (bad)
			break;
	}
	return bad;
}

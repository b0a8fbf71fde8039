/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Unit tests of the decoder: single instructions given as raw bytes, the
 * frame analysis on small hand-assembled functions, and the ELF layer on
 * this very test binary.  No root needed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "history/history.h"
#include "sites/decode.h"
#include "test.h"

/* ASSERT_OK of test.h trips -Wmisleading-indentation (one-line if); same check, no warning. */
#define ASSERT_ZERO(v, what) ASSERT_EQ(v, 0, what)

int test_global;

__attribute__((noinline)) void write_global(int v)
{
	test_global = v;
}

/* Called through a volatile pointer so that the compiler keeps the out-of-line copy. */
static void (*volatile write_global_ptr)(int) = write_global;

struct result {
	struct site_vec sites;
	struct decode_stats stats;
	int err;
};

static struct result decode_opts(const uint8_t *code, size_t len, const struct decode_opts *opts)
{
	struct result r = {};

	r.err = decode__function(code, len, 0x1000, 7, opts, &r.sites, &r.stats);
	return r;
}

static struct result decode(const uint8_t *code, size_t len)
{
	static const struct decode_opts opts;

	return decode_opts(code, len, &opts);
}

/* decode_opts::call_name for the spin-wait tests: the call to 0x120d calls ctx (a name). */
static const char *lock_call_name(const void *ctx, uint64_t target)
{
	return target == 0x120d ? ctx : "pthread_mutex_unlock";
}

#define DECODE(...) ({ static const uint8_t _c[] = { __VA_ARGS__ }; decode(_c, sizeof(_c)); })
#define DECODE_OPTS(o, ...) \
	({ static const uint8_t _c[] = { __VA_ARGS__ }; decode_opts(_c, sizeof(_c), o); })

/* Exactly one site, and nothing counted as left out. */
static const struct site *one_site(struct result *r)
{
	ASSERT_ZERO(r->err, "decode__function");
	if (!ASSERT_EQ(r->sites.n, 1, "sites"))
		return NULL;
	ASSERT_EQ(r->stats.sites, 1, "stats.sites");
	ASSERT_EQ(r->stats.unencodable, 0, "stats.unencodable");
	ASSERT_EQ(r->stats.decode_errors, 0, "stats.decode_errors");
	return &r->sites.v[0];
}

/* No site; what was counted is checked by the caller. */
static void no_site(struct result *r)
{
	ASSERT_ZERO(r->err, "decode__function");
	ASSERT_EQ(r->sites.n, 0, "sites");
	ASSERT_EQ(r->stats.sites, 0, "stats.sites");
	ASSERT_EQ(r->stats.funcs_without_sites, 1, "stats.funcs_without_sites");
}

static void test_instructions(void)
{
	static const struct decode_opts keep_stack = { .keep_stack = true };
	static const struct decode_opts keep_tls = { .keep_tls = true };
	static const struct decode_opts kernel = { .keep_tls = true, .skip_gs = true };
	const struct site *s;
	struct result r;

	TEST(rip_relative_load) {
		r = DECODE(0x8b, 0x05, 0x34, 0x12, 0x00, 0x00);	/* mov eax,[rip+0x1234] */
		if ((s = one_site(&r))) {
			ASSERT_EQ(s->desc.flags, KCSAND_SITE_READ, "flags");
			ASSERT_EQ(s->desc.size, 4, "size");
			ASSERT_EQ(s->desc.base, KCSAND_REG_RIP, "base");
			ASSERT_EQ(s->desc.index, KCSAND_REG_NONE, "index");
			ASSERT_EQ(s->desc.scale, 1, "scale");
			ASSERT_EQ(s->desc.disp, 0x1234, "disp");
			ASSERT_EQ(s->desc.insn_len, 6, "insn_len");
			ASSERT_EQ(s->vaddr, 0x1000, "vaddr");
			ASSERT_EQ(s->file_off, 0x1000, "file_off");
			ASSERT_EQ(s->func, 7, "func");
			ASSERT_EQ(s->reason, MARK_NONE, "reason");
		}
		ASSERT_EQ(r.stats.insns, 1, "stats.insns");
		ASSERT_EQ(r.stats.funcs, 1, "stats.funcs");
		ASSERT_EQ(r.stats.funcs_without_sites, 0, "stats.funcs_without_sites");
		site_vec__free(&r.sites);
	}

	TEST(sib_store) {
		r = DECODE(0x89, 0x4c, 0xb7, 0x08);	/* mov [rdi+rsi*4+8],ecx */
		if ((s = one_site(&r))) {
			ASSERT_EQ(s->desc.flags, KCSAND_SITE_WRITE, "flags");
			ASSERT_EQ(s->desc.size, 4, "size");
			ASSERT_EQ(s->desc.base, KCSAND_REG_RDI, "base");
			ASSERT_EQ(s->desc.index, KCSAND_REG_RSI, "index");
			ASSERT_EQ(s->desc.scale, 4, "scale");
			ASSERT_EQ(s->desc.disp, 8, "disp");
			ASSERT_EQ(s->desc.insn_len, 4, "insn_len");
		}
		site_vec__free(&r.sites);
	}

	TEST(negative_disp) {
		r = DECODE(0x48, 0x8b, 0x47, 0xf8);	/* mov rax,[rdi-8] */
		if ((s = one_site(&r))) {
			ASSERT_EQ(s->desc.disp, -8, "disp");
			ASSERT_EQ(s->desc.size, 8, "size");
		}
		site_vec__free(&r.sites);
	}

	TEST(plain_rmw) {
		r = DECODE(0x83, 0x00, 0x01);		/* add dword [rax],1 */
		if ((s = one_site(&r))) {
			ASSERT_EQ(s->desc.flags, KCSAND_SITE_READ | KCSAND_SITE_WRITE, "flags");
			ASSERT_EQ(s->desc.base, KCSAND_REG_RAX, "base");
			ASSERT_EQ(s->reason, MARK_NONE, "reason");
		}
		ASSERT_EQ(r.stats.marked, 0, "stats.marked");
		site_vec__free(&r.sites);
	}

	TEST(lock_add) {
		r = DECODE(0xf0, 0x83, 0x07, 0x01,	/* lock add dword [rdi],1 */
			   0xc3);			/* ret */
		if ((s = one_site(&r))) {
			ASSERT_EQ(s->desc.flags, KCSAND_SITE_READ | KCSAND_SITE_WRITE |
				  KCSAND_SITE_MARKED | KCSAND_SITE_TEACHES, "flags");
			ASSERT_EQ(s->desc.size, 4, "size");
			ASSERT_EQ(s->reason, MARK_LOCK_PREFIX, "reason");
			/* uprobes refuse lock prefixes: probed at the ret, reported at 0x1000 */
			ASSERT_EQ(s->desc.probe_delta, 4, "probe after the locked instruction");
			ASSERT_EQ(s->vaddr, 0x1000, "site is the locked instruction");
		}
		ASSERT_EQ(r.stats.marked, 1, "stats.marked");
		site_vec__free(&r.sites);
	}

	TEST(lock_at_function_end_is_unencodable) {
		r = DECODE(0xf0, 0x83, 0x07, 0x01);	/* lock add dword [rdi],1: nothing after it */
		ASSERT_EQ(r.sites.n, 0, "no site without a next instruction to probe");
		ASSERT_EQ(r.stats.unencodable, 1, "counted as unencodable");
		site_vec__free(&r.sites);
	}

	TEST(lock_that_clobbers_its_base_is_unencodable) {
		r = DECODE(0xf0, 0x0f, 0xb1, 0x08,	/* lock cmpxchg [rax],ecx: writes rax */
			   0xc3);
		ASSERT_EQ(r.sites.n, 0, "address register not valid after the instruction");
		ASSERT_EQ(r.stats.unencodable, 1, "counted as unencodable");
		site_vec__free(&r.sites);
	}

	TEST(probe_locked_keeps_lock_in_place) {
		static const struct decode_opts kopts = { .probe_locked = true };

		r = DECODE_OPTS(&kopts, 0xf0, 0x83, 0x07, 0x01);	/* kprobes take it */
		if ((s = one_site(&r)))
			ASSERT_EQ(s->desc.probe_delta, 0, "no deferral");
		site_vec__free(&r.sites);
	}

	TEST(ds_prefix_is_unencodable_for_uprobes) {
		r = DECODE(0x3e, 0x8b, 0x07, 0xc3);	/* mov eax,ds:[rdi]; ret */
		ASSERT_EQ(r.sites.n, 0, "uprobes refuse ds prefixes");
		ASSERT_EQ(r.stats.unencodable, 1, "counted");
		site_vec__free(&r.sites);
	}

	TEST(vex_store_read_as_jcc_is_not_probed) {
		r = DECODE(0xc5, 0xfa, 0x7f, 0x07,	/* vmovdqu [rdi],xmm0: VEX 0f 7f, "jg" */
			   0x62, 0xe1, 0xfe, 0x28, 0x7f, 0x07,	/* vmovdqu64 [rdi],ymm16: EVEX */
			   0xc5, 0xf9, 0xda, 0x06,	/* vpminub xmm0,xmm0,[rsi]: VEX 0f da, kept */
			   0xc3);
		if ((s = one_site(&r)))
			ASSERT_EQ(s->vaddr, 0x100a, "the load is probed");
		ASSERT_EQ(r.stats.misemulated, 2, "both stores counted");
		site_vec__free(&r.sites);
	}

	TEST(vex_insns_uprobes_refuse_are_not_probed) {
		r = DECODE(0xc5, 0xfa, 0x6f, 0x06,	/* vmovdqu xmm0,[rsi]: VEX 6f, "outs" */
			   0xc5, 0xf9, 0x6e, 0x07,	/* vmovd xmm0,[rdi]: VEX 6e */
			   0xc5, 0xfd, 0xe7, 0x07,	/* vmovntdq [rdi],ymm0: VEX e7, "out" */
			   0xf3, 0x0f, 0x6f, 0x06,	/* movdqu xmm0,[rsi]: legacy 0f 6f, kept */
			   0xc3);
		if ((s = one_site(&r)))
			ASSERT_EQ(s->vaddr, 0x100c, "the legacy load is probed");
		ASSERT_EQ(r.stats.refused, 3, "the three VEX ones counted");
		site_vec__free(&r.sites);
	}

	TEST(lock_before_vex_jcc_opcode_is_not_probed) {
		r = DECODE(0xf0, 0x83, 0x07, 0x01,	/* lock add dword [rdi],1 */
			   0xc5, 0xf9, 0x7e, 0xc0,	/* vmovd eax,xmm0: would carry its probe */
			   0xc3);
		ASSERT_EQ(r.sites.n, 0, "no deferred probe on it");
		ASSERT_EQ(r.stats.misemulated, 1, "counted");
		site_vec__free(&r.sites);
	}

	TEST(lock_before_lock_is_not_probed) {
		r = DECODE(0xf0, 0x83, 0x88, 0x08, 0x03, 0x00, 0x00, 0x10, /* lock or dword [rax+0x308],0x10 */
			   0xf0, 0xff, 0x0f,		/* lock dec dword [rdi]: would carry the first's probe */
			   0x8b, 0x07,			/* mov eax,[rdi]: carries the second's */
			   0xc3);
		ASSERT_EQ(r.sites.n, 2, "the second locked access and the load");
		ASSERT_EQ(r.stats.misemulated, 1, "the first counted");
		site_vec__free(&r.sites);
	}

	TEST(stop_at_padding) {
		static const struct decode_opts kopts = { .stop_at_padding = true };

		r = DECODE_OPTS(&kopts, 0x8b, 0x07,		/* mov eax,[rdi] */
				0xc3,				/* ret */
				0x00, 0x00, 0x00, 0x00);	/* zero fill: add [rax],al x2 */
		ASSERT_EQ(r.sites.n, 1, "the zero fill after the last function is no code");
		site_vec__free(&r.sites);
		r = DECODE_OPTS(&kopts, 0x8b, 0x07, 0xc3, 0xcc, 0xcc, 0x8b, 0x06);
		ASSERT_EQ(r.sites.n, 1, "int3 padding ends the function");
		site_vec__free(&r.sites);
		r = DECODE(0x8b, 0x07, 0xc3, 0x00, 0x00);
		ASSERT_EQ(r.sites.n, 2, "without the option, zero bytes decode as an access");
		site_vec__free(&r.sites);
	}

	TEST(xchg_mem) {
		r = DECODE(0x87, 0x07);			/* xchg [rdi],eax */
		if ((s = one_site(&r))) {
			ASSERT_TRUE(s->desc.flags & KCSAND_SITE_MARKED, "marked");
			ASSERT_EQ(s->desc.flags & (KCSAND_SITE_READ | KCSAND_SITE_WRITE),
				  KCSAND_SITE_READ | KCSAND_SITE_WRITE, "read+write");
			ASSERT_EQ(s->reason, MARK_XCHG, "reason");
		}
		ASSERT_EQ(r.stats.marked, 1, "stats.marked");
		site_vec__free(&r.sites);
	}

	TEST(xchg_reg_is_no_site) {
		r = DECODE(0x87, 0xc8);			/* xchg eax,ecx */
		no_site(&r);
		ASSERT_EQ(r.stats.unencodable, 0, "stats.unencodable");
		site_vec__free(&r.sites);
	}

	TEST(lock_cmpxchg) {
		r = DECODE(0xf0, 0x0f, 0xb1, 0x0f,	/* lock cmpxchg [rdi],ecx */
			   0xc3);			/* ret */
		if ((s = one_site(&r))) {
			ASSERT_TRUE(s->desc.flags & KCSAND_SITE_MARKED, "marked");
			/* The store is conditional: CONDWRITE counts as a write. */
			ASSERT_TRUE(s->desc.flags & KCSAND_SITE_WRITE, "write");
			ASSERT_TRUE(s->desc.flags & KCSAND_SITE_READ, "read");
			ASSERT_EQ(s->reason, MARK_LOCK_PREFIX, "reason");
			ASSERT_EQ(s->desc.size, 4, "size");
		}
		site_vec__free(&r.sites);
	}

	TEST(fs_is_tls) {
		r = DECODE(0x64, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0);	/* mov eax,fs:[0x10] */
		no_site(&r);
		ASSERT_EQ(r.stats.skipped_tls, 1, "stats.skipped_tls");
		site_vec__free(&r.sites);

		r = DECODE_OPTS(&keep_tls, 0x64, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0);
		if ((s = one_site(&r))) {
			ASSERT_EQ(s->desc.base, KCSAND_REG_NONE, "base");
			ASSERT_EQ(s->desc.disp, 0x10, "disp");
		}
		ASSERT_EQ(r.stats.skipped_tls, 0, "stats.skipped_tls");
		site_vec__free(&r.sites);
	}

	TEST(gs) {
		r = DECODE(0x65, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0);	/* mov eax,gs:[0x10] */
		no_site(&r);
		ASSERT_EQ(r.stats.skipped_tls, 1, "stats.skipped_tls");
		site_vec__free(&r.sites);

		r = DECODE_OPTS(&keep_tls, 0x65, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0);
		one_site(&r);
		site_vec__free(&r.sites);

		/* Per-CPU data in the kernel: skipped even when TLS is kept. */
		r = DECODE_OPTS(&kernel, 0x65, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0);
		no_site(&r);
		ASSERT_EQ(r.stats.skipped_tls, 1, "stats.skipped_tls");
		site_vec__free(&r.sites);
	}

	TEST(stack_rsp) {
		r = DECODE(0x48, 0x89, 0x44, 0x24, 0x08);	/* mov [rsp+8],rax */
		no_site(&r);
		ASSERT_EQ(r.stats.skipped_stack, 1, "stats.skipped_stack");
		site_vec__free(&r.sites);

		r = DECODE_OPTS(&keep_stack, 0x48, 0x89, 0x44, 0x24, 0x08);
		if ((s = one_site(&r))) {
			ASSERT_EQ(s->desc.base, KCSAND_REG_RSP, "base");
			ASSERT_EQ(s->desc.disp, 8, "disp");
			ASSERT_EQ(s->desc.size, 8, "size");
			ASSERT_EQ(s->desc.flags, KCSAND_SITE_WRITE, "flags");
		}
		ASSERT_EQ(r.stats.skipped_stack, 0, "stats.skipped_stack");
		site_vec__free(&r.sites);
	}

	TEST(stack_rbp) {
		/* rbp is the stack only where the function set it up as its frame. */
		r = DECODE(0x55,				/* push rbp */
			   0x48, 0x89, 0xe5,			/* mov rbp,rsp */
			   0x48, 0x8b, 0x45, 0xf8,		/* mov rax,[rbp-8] */
			   0x5d,				/* pop rbp */
			   0xc3);				/* ret */
		no_site(&r);
		ASSERT_EQ(r.stats.skipped_stack, 1, "stats.skipped_stack");
		site_vec__free(&r.sites);

		r = DECODE_OPTS(&keep_stack, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x8b, 0x45, 0xf8,
				0x5d, 0xc3);
		if ((s = one_site(&r))) {
			ASSERT_EQ(s->desc.base, KCSAND_REG_RBP, "base");
			ASSERT_EQ(s->desc.disp, -8, "disp");
			ASSERT_EQ(s->desc.flags, KCSAND_SITE_READ, "flags");
		}
		site_vec__free(&r.sites);
	}

	TEST(rbp_without_frame_is_data) {
		/* gcc -O2, the kernel with ORC: rbp is an ordinary register. */
		r = DECODE(0x53,				/* push rbx */
			   0x48, 0x8b, 0x2f,			/* mov rbp,[rdi] */
			   0x8b, 0x45, 0x10,			/* mov eax,[rbp+0x10] */
			   0x89, 0x45, 0x14,			/* mov [rbp+0x14],eax */
			   0x5b,				/* pop rbx */
			   0xc3);				/* ret */
		ASSERT_ZERO(r.err, "decode__function");
		ASSERT_EQ(r.sites.n, 3, "sites: [rdi] and both rbp-based accesses");
		ASSERT_EQ(r.stats.skipped_stack, 0, "stats.skipped_stack");
		if (r.sites.n == 3) {
			ASSERT_EQ(r.sites.v[1].desc.base, KCSAND_REG_RBP, "base");
			ASSERT_EQ(r.sites.v[1].desc.disp, 0x10, "disp");
			ASSERT_EQ(r.sites.v[2].desc.flags, KCSAND_SITE_WRITE, "flags");
		}
		site_vec__free(&r.sites);
	}

	TEST(rbp_copy_of_rsp_is_stack) {
		/* Without push rbp, mov rbp,rsp is no frame, but rbp still points to the stack. */
		r = DECODE(0x48, 0x89, 0xe5,			/* mov rbp,rsp */
			   0x48, 0x8b, 0x45, 0xf8,		/* mov rax,[rbp-8] */
			   0xc3);				/* ret */
		no_site(&r);
		ASSERT_EQ(r.stats.skipped_stack, 1, "stats.skipped_stack");
		site_vec__free(&r.sites);
	}

	TEST(rbp_after_frame_is_popped) {
		/* After pop rbp the caller's rbp is back: in frameless callers, data. */
		r = DECODE(0x55,				/* push rbp */
			   0x48, 0x89, 0xe5,			/* mov rbp,rsp */
			   0x5d,				/* pop rbp */
			   0x8b, 0x45, 0x10,			/* mov eax,[rbp+0x10] */
			   0xc3);				/* ret */
		ASSERT_EQ(r.sites.n, 1, "sites");
		site_vec__free(&r.sites);
	}

	TEST(escaped_stack_slot_passed_to_call) {
		/* shared(x): the parent's x is reached by other threads through &x. */
		r = DECODE(0x55,				/* push rbp */
			   0x48, 0x89, 0xe5,			/* mov rbp,rsp */
			   0x48, 0x83, 0xec, 0x10,		/* sub rsp,16 */
			   0x48, 0x8d, 0x7d, 0xfc,		/* lea rdi,[rbp-4] */
			   0xe8, 0x00, 0x00, 0x00, 0x00,	/* call (&x passed on) */
			   0x8b, 0x45, 0xfc,			/* mov eax,[rbp-4] */
			   0x8b, 0x55, 0xf0,			/* mov edx,[rbp-16] */
			   0xc9,				/* leave */
			   0xc3);				/* ret */
		if ((s = one_site(&r))) {
			ASSERT_EQ(s->desc.base, KCSAND_REG_RBP, "base");
			ASSERT_EQ(s->desc.disp, -4, "disp");
			ASSERT_EQ(s->desc.flags, KCSAND_SITE_READ, "flags");
		}
		ASSERT_EQ(r.stats.stack_sites, 1, "stats.stack_sites");
		ASSERT_EQ(r.stats.skipped_stack, 1, "stats.skipped_stack: [rbp-16] is below &x");
		site_vec__free(&r.sites);
	}

	TEST(escaped_stack_slot_stored) {
		/* &x stored (an OpenMP data block, a struct field): rsp-relative, after a sub. */
		r = DECODE(0x48, 0x83, 0xec, 0x18,		/* sub rsp,24 */
			   0x48, 0x8d, 0x44, 0x24, 0x08,	/* lea rax,[rsp+8] */
			   0x48, 0x89, 0x04, 0x24,		/* mov [rsp],rax */
			   0x8b, 0x54, 0x24, 0x08,		/* mov edx,[rsp+8] */
			   0x48, 0x83, 0xc4, 0x18,		/* add rsp,24 */
			   0xc3);				/* ret */
		if ((s = one_site(&r))) {
			ASSERT_EQ(s->desc.base, KCSAND_REG_RSP, "base");
			ASSERT_EQ(s->desc.disp, 8, "disp");
		}
		ASSERT_EQ(r.stats.skipped_stack, 1, "stats.skipped_stack: [rsp] holds &x");
		site_vec__free(&r.sites);
	}

	TEST(stack_address_kept_in_registers) {
		/* A pointer to a local that never leaves the registers: the local stays private. */
		r = DECODE(0x55,				/* push rbp */
			   0x48, 0x89, 0xe5,			/* mov rbp,rsp */
			   0x48, 0x8d, 0x45, 0xfc,		/* lea rax,[rbp-4] */
			   0x48, 0x89, 0xc2,			/* mov rdx,rax */
			   0x8b, 0x02,				/* mov eax,[rdx] */
			   0x8b, 0x4d, 0xfc,			/* mov ecx,[rbp-4] */
			   0x5d,				/* pop rbp */
			   0xc3);				/* ret */
		ASSERT_EQ(r.sites.n, 1, "sites: [rdx] only");
		ASSERT_EQ(r.stats.stack_sites, 0, "stats.stack_sites");
		ASSERT_EQ(r.stats.skipped_stack, 1, "stats.skipped_stack");
		site_vec__free(&r.sites);
	}

	TEST(string_ops) {
		r = DECODE(0xf3, 0xa4);			/* rep movsb */
		no_site(&r);
		ASSERT_EQ(r.stats.unencodable, 1, "rep movsb: stats.unencodable");
		site_vec__free(&r.sites);

		r = DECODE(0x48, 0xa5);			/* movsq */
		no_site(&r);
		ASSERT_EQ(r.stats.unencodable, 1, "movsq: stats.unencodable");
		site_vec__free(&r.sites);

		r = DECODE(0xf3, 0x48, 0xab);		/* rep stosq */
		no_site(&r);
		ASSERT_EQ(r.stats.unencodable, 1, "rep stosq: stats.unencodable");
		site_vec__free(&r.sites);
	}

	TEST(ymm_load) {
		r = DECODE(0xc5, 0xfd, 0xda, 0x07);	/* vpminub ymm0,ymm0,[rdi] */
		if ((s = one_site(&r))) {
			ASSERT_EQ(s->desc.flags, KCSAND_SITE_READ, "flags");
			ASSERT_EQ(s->desc.size, 32, "size");
			ASSERT_EQ(s->desc.base, KCSAND_REG_RDI, "base");
		}
		site_vec__free(&r.sites);
	}

	TEST(zmm_load_too_wide) {
		r = DECODE(0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x07);	/* vmovdqu64 zmm0,[rdi] */
		no_site(&r);
		ASSERT_EQ(r.stats.unencodable, 1, "stats.unencodable");
		site_vec__free(&r.sites);
	}

	TEST(fxsave_too_wide) {
		r = DECODE(0x0f, 0xae, 0x07);		/* fxsave [rdi] */
		no_site(&r);
		ASSERT_EQ(r.stats.unencodable, 1, "stats.unencodable");
		site_vec__free(&r.sites);
	}

	TEST(non_accesses) {
		r = DECODE(0x48, 0x8d, 0x47, 0x08);	/* lea rax,[rdi+8] */
		no_site(&r);
		ASSERT_EQ(r.stats.unencodable, 0, "lea: stats.unencodable");
		site_vec__free(&r.sites);

		r = DECODE(0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00);	/* nop word [rax+rax*1+0] */
		no_site(&r);
		ASSERT_EQ(r.stats.unencodable, 0, "nopw: stats.unencodable");
		site_vec__free(&r.sites);

		r = DECODE(0x0f, 0x18, 0x0f);		/* prefetcht0 [rdi] */
		no_site(&r);
		ASSERT_EQ(r.stats.unencodable, 0, "prefetcht0: stats.unencodable");
		site_vec__free(&r.sites);

		r = DECODE(0x0f, 0xae, 0x3f);		/* clflush [rdi] */
		no_site(&r);
		ASSERT_EQ(r.stats.unencodable, 0, "clflush: stats.unencodable");
		site_vec__free(&r.sites);
	}

	TEST(vsib_gather) {
		/* vpgatherdd ymm0,[rdi+ymm1*4],ymm2 */
		r = DECODE(0xc4, 0xe2, 0x6d, 0x90, 0x04, 0x8f);
		no_site(&r);
		ASSERT_EQ(r.stats.unencodable, 1, "stats.unencodable");
		site_vec__free(&r.sites);
	}

	TEST(addr32) {
		r = DECODE(0x67, 0x8b, 0x07);		/* mov eax,[edi] */
		no_site(&r);
		ASSERT_EQ(r.stats.unencodable, 1, "stats.unencodable");
		site_vec__free(&r.sites);
	}

	TEST(cmp_byte) {
		r = DECODE(0x80, 0x3f, 0x00);		/* cmp byte [rdi],0 */
		if ((s = one_site(&r))) {
			ASSERT_EQ(s->desc.flags, KCSAND_SITE_READ, "flags");
			ASSERT_EQ(s->desc.size, 1, "size");
		}
		site_vec__free(&r.sites);
	}

	TEST(push_pop_call_ret_are_not_sites) {
		r = DECODE(0x53,			/* push rbx */
			   0xe8, 0x00, 0x00, 0x00, 0x00,	/* call .+5 */
			   0x5b,			/* pop rbx */
			   0xc9,			/* leave */
			   0xc3);			/* ret */
		no_site(&r);
		ASSERT_EQ(r.stats.unencodable, 0, "stats.unencodable");
		ASSERT_EQ(r.stats.skipped_stack, 0, "stats.skipped_stack");
		ASSERT_EQ(r.stats.insns, 5, "stats.insns");
		site_vec__free(&r.sites);
	}

	TEST(push_mem_is_a_read) {
		r = DECODE(0xff, 0x37);			/* push qword [rdi] */
		if ((s = one_site(&r))) {
			ASSERT_EQ(s->desc.flags, KCSAND_SITE_READ, "flags");
			ASSERT_EQ(s->desc.size, 8, "size");
		}
		site_vec__free(&r.sites);
	}

	TEST(decode_error_stops) {
		r = DECODE(0x8b, 0x07,			/* mov eax,[rdi] */
			   0x06,			/* push es: invalid in long mode */
			   0x8b, 0x06);			/* mov eax,[rsi] */
		ASSERT_ZERO(r.err, "decode__function");
		ASSERT_EQ(r.sites.n, 1, "sites");
		ASSERT_EQ(r.stats.decode_errors, 1, "stats.decode_errors");
		ASSERT_EQ(r.stats.insns, 1, "stats.insns");
		site_vec__free(&r.sites);
	}
}

/* ra_off of the n-th site. */
static int ra_off(const struct result *r, size_t n)
{
	return n < r->sites.n ? r->sites.v[n].desc.ra_off : -1000;
}

static void test_frames(void)
{
	struct result r;

	TEST(frame_pointer) {
		r = DECODE(0x55,				/* push rbp */
			   0x48, 0x89, 0xe5,			/* mov rbp,rsp */
			   0x8b, 0x05, 0x34, 0x12, 0x00, 0x00,	/* mov eax,[rip+0x1234] */
			   0x5d,				/* pop rbp */
			   0xc3);				/* ret */
		ASSERT_EQ(r.sites.n, 1, "sites");
		ASSERT_EQ(ra_off(&r, 0), -1, "ra_off");
		site_vec__free(&r.sites);
	}

	TEST(frameless) {
		r = DECODE(0x8b, 0x05, 0x34, 0x12, 0x00, 0x00,	/* mov eax,[rip+0x1234] */
			   0xc3);				/* ret */
		ASSERT_EQ(r.sites.n, 1, "sites");
		ASSERT_EQ(ra_off(&r, 0), 0, "ra_off");
		site_vec__free(&r.sites);
	}

	TEST(push_rbx) {
		r = DECODE(0x53,				/* push rbx */
			   0x8b, 0x07,				/* mov eax,[rdi] */
			   0x5b,				/* pop rbx */
			   0xc3);				/* ret */
		ASSERT_EQ(r.sites.n, 1, "sites");
		ASSERT_EQ(ra_off(&r, 0), 8, "ra_off");
		site_vec__free(&r.sites);
	}

	TEST(sub_rsp) {
		r = DECODE(0x48, 0x83, 0xec, 0x18,		/* sub rsp,0x18 */
			   0x8b, 0x07,				/* mov eax,[rdi] */
			   0x48, 0x83, 0xc4, 0x18,		/* add rsp,0x18 */
			   0x8b, 0x06,				/* mov eax,[rsi] */
			   0xc3);				/* ret */
		ASSERT_EQ(r.sites.n, 2, "sites");
		ASSERT_EQ(ra_off(&r, 0), 0x18, "ra_off in body");
		ASSERT_EQ(ra_off(&r, 1), 0, "ra_off after add");
		site_vec__free(&r.sites);
	}

	TEST(load_before_push_rbp) {
		r = DECODE(0xf3, 0x0f, 0x1e, 0xfa,		/* endbr64 */
			   0x8b, 0x07,				/* mov eax,[rdi] */
			   0x55,				/* push rbp */
			   0x48, 0x89, 0xe5,			/* mov rbp,rsp */
			   0x8b, 0x06,				/* mov eax,[rsi] */
			   0x5d,				/* pop rbp */
			   0x8b, 0x02,				/* mov eax,[rdx] */
			   0xc3);				/* ret */
		ASSERT_EQ(r.sites.n, 3, "sites");
		ASSERT_EQ(ra_off(&r, 0), 0, "ra_off before the frame");
		ASSERT_EQ(ra_off(&r, 1), -1, "ra_off in the frame");
		ASSERT_EQ(ra_off(&r, 2), 0, "ra_off after pop rbp");
		site_vec__free(&r.sites);
	}

	TEST(second_ret_path) {
		r = DECODE(0x53,				/* push rbx */
			   0x85, 0xff,				/* test edi,edi */
			   0x74, 0x04,				/* je L */
			   0x8b, 0x07,				/* mov eax,[rdi] */
			   0x5b,				/* pop rbx */
			   0xc3,				/* ret */
			   0x8b, 0x06,				/* L: mov eax,[rsi] */
			   0x5b,				/* pop rbx */
			   0xc3);				/* ret */
		ASSERT_EQ(r.sites.n, 2, "sites");
		ASSERT_EQ(ra_off(&r, 0), 8, "ra_off first path");
		ASSERT_EQ(ra_off(&r, 1), 8, "ra_off second path");
		site_vec__free(&r.sites);
	}

	TEST(second_ret_path_framed) {
		r = DECODE(0x55,				/* push rbp */
			   0x48, 0x89, 0xe5,			/* mov rbp,rsp */
			   0x85, 0xff,				/* test edi,edi */
			   0x74, 0x04,				/* je L */
			   0x8b, 0x07,				/* mov eax,[rdi] */
			   0x5d,				/* pop rbp */
			   0xc3,				/* ret */
			   0x8b, 0x06,				/* L: mov eax,[rsi] */
			   0x5d,				/* pop rbp */
			   0xc3);				/* ret */
		ASSERT_EQ(r.sites.n, 2, "sites");
		ASSERT_EQ(ra_off(&r, 0), -1, "ra_off first path");
		ASSERT_EQ(ra_off(&r, 1), -1, "ra_off second path");
		site_vec__free(&r.sites);
	}

	TEST(shrink_wrapped_loop) {
		/* The loop head is reached only by the back edge, in the pushed state. */
		r = DECODE(0x85, 0xff,				/* test edi,edi */
			   0x74, 0x0d,				/* je L_exit */
			   0x53,				/* push rbx */
			   0xeb, 0x02,				/* jmp L_body */
			   0x8b, 0x06,				/* L_loop: mov eax,[rsi] */
			   0x8b, 0x0f,				/* L_body: mov ecx,[rdi] */
			   0xff, 0xca,				/* dec edx */
			   0x75, 0xf8,				/* jne L_loop */
			   0x5b,				/* pop rbx */
			   0xc3,				/* ret */
			   0x31, 0xc0,				/* L_exit: xor eax,eax */
			   0xc3);				/* ret */
		ASSERT_EQ(r.sites.n, 2, "sites");
		ASSERT_EQ(ra_off(&r, 0), 8, "ra_off at the loop head");
		ASSERT_EQ(ra_off(&r, 1), 8, "ra_off in the loop body");
		site_vec__free(&r.sites);
	}

	TEST(jump_table_case) {
		/* Code after an indirect jmp is a case: it has the jmp's stack. */
		r = DECODE(0x53,				/* push rbx */
			   0x85, 0xff,				/* test edi,edi */
			   0x74, 0x07,				/* je L */
			   0x41, 0x54,				/* push r12 */
			   0xff, 0xe0,				/* jmp rax */
			   0x8b, 0x07,				/* mov eax,[rdi] */
			   0xc3,				/* ret */
			   0x8b, 0x06,				/* L: mov eax,[rsi] */
			   0x5b,				/* pop rbx */
			   0xc3);				/* ret */
		ASSERT_EQ(r.sites.n, 2, "sites");
		ASSERT_EQ(ra_off(&r, 0), 16, "ra_off in the case");
		ASSERT_EQ(ra_off(&r, 1), 8, "ra_off at the branch target");
		site_vec__free(&r.sites);
	}

	TEST(frame_needs_saved_rbp) {
		/* GCC may schedule an instruction between push rbp and mov rbp,rsp. */
		r = DECODE(0x55,				/* push rbp */
			   0x49, 0x89, 0xf2,			/* mov r10,rsi */
			   0x48, 0x89, 0xe5,			/* mov rbp,rsp */
			   0x8b, 0x07,				/* mov eax,[rdi] */
			   0x5d,				/* pop rbp */
			   0xc3);				/* ret */
		ASSERT_EQ(ra_off(&r, 0), -1, "ra_off in the frame");
		site_vec__free(&r.sites);

		/* Without the saved rbp at [rsp], rbp is just a pointer to a local. */
		r = DECODE(0x53,				/* push rbx */
			   0x48, 0x89, 0xe5,			/* mov rbp,rsp */
			   0x8b, 0x07,				/* mov eax,[rdi] */
			   0x5b,				/* pop rbx */
			   0xc3);				/* ret */
		ASSERT_EQ(ra_off(&r, 0), 8, "ra_off without a frame");
		site_vec__free(&r.sites);
	}

	TEST(rsp_saved_in_register) {
		/* GCC restores rsp from a callee-saved copy instead of popping call arguments. */
		r = DECODE(0x53,				/* push rbx */
			   0x48, 0x89, 0xe3,			/* mov rbx,rsp */
			   0x50,				/* push rax */
			   0x50,				/* push rax */
			   0xe8, 0x00, 0x00, 0x00, 0x00,	/* call .+5 */
			   0x48, 0x89, 0xdc,			/* mov rsp,rbx */
			   0x8b, 0x07,				/* mov eax,[rdi] */
			   0x5b,				/* pop rbx */
			   0xc3);				/* ret */
		ASSERT_EQ(ra_off(&r, 0), 8, "ra_off after mov rsp,rbx");
		site_vec__free(&r.sites);

		/* A caller-saved copy does not survive the call. */
		r = DECODE(0x53,				/* push rbx */
			   0x48, 0x89, 0xe0,			/* mov rax,rsp */
			   0x50,				/* push rax */
			   0xe8, 0x00, 0x00, 0x00, 0x00,	/* call .+5 */
			   0x48, 0x89, 0xc4,			/* mov rsp,rax */
			   0x8b, 0x07,				/* mov eax,[rdi] */
			   0x5b,				/* pop rbx */
			   0xc3);				/* ret */
		ASSERT_EQ(ra_off(&r, 0), -1, "ra_off after mov rsp,rax");
		site_vec__free(&r.sites);
	}

	TEST(leave_tears_down) {
		r = DECODE(0x55,				/* push rbp */
			   0x48, 0x89, 0xe5,			/* mov rbp,rsp */
			   0x48, 0x83, 0xec, 0x20,		/* sub rsp,0x20 */
			   0x8b, 0x07,				/* mov eax,[rdi] */
			   0xc9,				/* leave */
			   0x8b, 0x06,				/* mov eax,[rsi] */
			   0xc3);				/* ret */
		ASSERT_EQ(r.sites.n, 2, "sites");
		ASSERT_EQ(ra_off(&r, 0), -1, "ra_off in the frame");
		ASSERT_EQ(ra_off(&r, 1), 0, "ra_off after leave");
		site_vec__free(&r.sites);
	}

	TEST(realigned_stack_is_unknown) {
		r = DECODE(0x53,				/* push rbx */
			   0x48, 0x83, 0xe4, 0xe0,		/* and rsp,-32 */
			   0x8b, 0x07,				/* mov eax,[rdi] */
			   0xc3,				/* ret */
			   0x8b, 0x06,				/* mov eax,[rsi] */
			   0xc3);				/* ret */
		ASSERT_EQ(r.sites.n, 2, "sites");
		ASSERT_EQ(ra_off(&r, 0), -1, "ra_off after and rsp");
		ASSERT_EQ(ra_off(&r, 1), 8, "ra_off after ret (prologue state)");
		site_vec__free(&r.sites);
	}

	TEST(sub_rsp_reg_is_unknown) {
		r = DECODE(0x48, 0x29, 0xc4,			/* sub rsp,rax */
			   0x8b, 0x07,				/* mov eax,[rdi] */
			   0xc3);				/* ret */
		ASSERT_EQ(ra_off(&r, 0), -1, "ra_off");
		site_vec__free(&r.sites);
	}

	TEST(ra_off_overflow) {
		r = DECODE(0x48, 0x81, 0xec, 0x00, 0x00, 0x01, 0x00,	/* sub rsp,0x10000 */
			   0x8b, 0x07,					/* mov eax,[rdi] */
			   0xc3);					/* ret */
		ASSERT_EQ(ra_off(&r, 0), -1, "ra_off");
		site_vec__free(&r.sites);
	}
}

/*
 * Whole functions whose shape matters: where the function ends, where a
 * deferred probe may go, which load belongs to a compare-and-swap loop.
 */
static void test_shapes(void)
{
	static const struct decode_opts kopts = { .stop_at_padding = true, .probe_locked = true };
	struct result r;

	TEST(returns_with_int3_padding) {
		/*
		 * Debian's kernel turns each `jmp __x86_return_thunk` into
		 * `ret; int3...`: code after it is the function's as long as a
		 * branch before it leads there.
		 */
		r = DECODE_OPTS(&kopts,
				0x8b, 0x07,			/* 0: mov eax,[rdi] */
				0x85, 0xc0,			/* 2: test eax,eax */
				0x74, 0x06,			/* 4: je 0xc */
				0x8b, 0x06,			/* 6: mov eax,[rsi] */
				0xc3,				/* 8: ret */
				0xcc, 0xcc, 0xcc,		/* 9: int3 x3 */
				0x8b, 0x02,			/* c: mov eax,[rdx] */
				0x74, 0x04,			/* e: je 0x14 */
				0xc3, 0xcc, 0xcc, 0xcc,		/* 10: ret; int3 x3 */
				0x89, 0x01,			/* 14: mov [rcx],eax */
				0xc3, 0xcc, 0xcc,		/* 16: ret, then padding */
				0x8b, 0x01);			/* 19: the next symbol's code */
		ASSERT_ZERO(r.err, "decode__function");
		ASSERT_EQ(r.sites.n, 4, "sites after the first and the second ret");
		if (r.sites.n == 4) {
			ASSERT_EQ(r.sites.v[2].vaddr, 0x100c, "third site");
			ASSERT_EQ(r.sites.v[3].vaddr, 0x1014, "fourth site");
		}
		ASSERT_EQ(r.stats.insns, 16, "stats.insns: up to the final ret");
		site_vec__free(&r.sites);
	}

	TEST(backward_branch_does_not_extend) {
		r = DECODE_OPTS(&kopts,
				0x8b, 0x07,			/* 0: mov eax,[rdi] */
				0x75, 0xfc,			/* 2: jne 0 */
				0xc3, 0xcc,			/* 4: ret; int3 */
				0x8b, 0x06);			/* 6: not this function's */
		ASSERT_EQ(r.sites.n, 1, "sites");
		site_vec__free(&r.sites);
	}

	TEST(lock_before_loop_head_is_not_deferred) {
		/*
		 * A rotated loop: its head (6) is entered by the jmp, so a
		 * probe there would also fire before the first lock add.
		 */
		r = DECODE(0xeb, 0x04,				/* 0: jmp 6 */
			   0xf0, 0x83, 0x07, 0x01,		/* 2: lock add dword [rdi],1 */
			   0x8b, 0x06,				/* 6: mov eax,[rsi] */
			   0x85, 0xc0,				/* 8: test eax,eax */
			   0x75, 0xf6,				/* a: jne 2 */
			   0xc3);				/* c: ret */
		ASSERT_ZERO(r.err, "decode__function");
		ASSERT_EQ(r.sites.n, 1, "sites: only [rsi]");
		if (r.sites.n == 1)
			ASSERT_EQ(r.sites.v[0].vaddr, 0x1006, "site");
		ASSERT_EQ(r.stats.lock_at_target, 1, "stats.lock_at_target");
		site_vec__free(&r.sites);

		r = DECODE_OPTS(&kopts, 0xeb, 0x04, 0xf0, 0x83, 0x07, 0x01, 0x8b, 0x06,
				0x85, 0xc0, 0x75, 0xf6, 0xc3);
		ASSERT_EQ(r.sites.n, 2, "kprobes take the lock add in place");
		ASSERT_EQ(r.stats.lock_at_target, 0, "stats.lock_at_target");
		site_vec__free(&r.sites);
	}

	TEST(cas_loop_read_double) {
		/* gcc -O2, OpenMP reduction(+:sum) on a double. */
		r = DECODE(0x48, 0x8b, 0x15, 0x00, 0x01, 0x00, 0x00,	/* 0: mov rdx,[rip+X] */
			   0x66, 0x48, 0x0f, 0x6e, 0xca,		/* 7: movq xmm1,rdx */
			   0x48, 0x89, 0xd0,				/* c: mov rax,rdx */
			   0xf2, 0x0f, 0x58, 0xc8,			/* f: addsd xmm1,xmm0 */
			   0x66, 0x48, 0x0f, 0x7e, 0xc9,		/* 13: movq rcx,xmm1 */
			   0xf0, 0x48, 0x0f, 0xb1, 0x0d, 0xe6, 0x00, 0x00, 0x00,
								/* 18: lock cmpxchg [rip+X],rcx */
			   0x75, 0x01,					/* 21: jne 24 */
			   0xc3,					/* 23: ret */
			   0x48, 0x89, 0xc2,				/* 24: mov rdx,rax */
			   0xeb, 0xde);					/* 27: jmp 7 */
		ASSERT_EQ(r.sites.n, 2, "sites");
		if (r.sites.n == 2) {
			ASSERT_EQ(r.sites.v[0].reason, MARK_CAS_LOOP, "the load's reason");
			ASSERT_EQ(r.sites.v[0].insn_reason, MARK_CAS_LOOP, "kept by mark__reset");
			ASSERT_TRUE(r.sites.v[0].desc.flags & KCSAND_SITE_MARKED, "marked");
			ASSERT_EQ(r.sites.v[1].reason, MARK_LOCK_PREFIX, "the cmpxchg's reason");
		}
		ASSERT_EQ(r.stats.cas_loop_reads, 1, "stats.cas_loop_reads");
		ASSERT_EQ(r.stats.marked, 2, "stats.marked");
		site_vec__free(&r.sites);
	}

	TEST(cas_loop_read_float_through_a_spill) {
		/* gcc -O1, C11 `f += v` on an _Atomic float: the value waits in a stack slot. */
		r = DECODE(0x48, 0x83, 0xec, 0x48,			/* 0: sub rsp,0x48 */
			   0x8b, 0x05, 0x00, 0x01, 0x00, 0x00,		/* 4: mov eax,[rip+Y] */
			   0x89, 0x44, 0x24, 0x1c,			/* a: mov [rsp+0x1c],eax */
			   0x0f, 0x28, 0xc8,				/* e: movaps xmm1,xmm0 */
			   0xf3, 0x0f, 0x58, 0x4c, 0x24, 0x1c,		/* 11: addss xmm1,[rsp+0x1c] */
			   0x66, 0x0f, 0x7e, 0xce,			/* 17: movd esi,xmm1 */
			   0x8b, 0x44, 0x24, 0x1c,			/* 1b: mov eax,[rsp+0x1c] */
			   0xf0, 0x0f, 0xb1, 0x35, 0xe3, 0x00, 0x00, 0x00,
								/* 1f: lock cmpxchg [rip+Y],esi */
			   0x40, 0x0f, 0x94, 0xc6,			/* 27: sete sil */
			   0x74, 0x04,					/* 2b: je 31 */
			   0x89, 0x44, 0x24, 0x1c,			/* 2d: mov [rsp+0x1c],eax */
			   0x40, 0x84, 0xf6,				/* 31: test sil,sil */
			   0x74, 0x05,					/* 34: je 3b */
			   0x48, 0x83, 0xc4, 0x48,			/* 36: add rsp,0x48 */
			   0xc3,					/* 3a: ret */
			   0xeb, 0xd1);					/* 3b: jmp e */
		ASSERT_EQ(r.sites.n, 2, "sites");
		if (r.sites.n == 2)
			ASSERT_EQ(r.sites.v[0].reason, MARK_CAS_LOOP, "the load's reason");
		ASSERT_EQ(r.stats.cas_loop_reads, 1, "stats.cas_loop_reads");
		site_vec__free(&r.sites);
	}

	TEST(cas_loop_read_through_a_register_copy) {
		/* gcc -O2 reduction on a double through a pointer: the address is copied first. */
		r = DECODE(0x49, 0x8b, 0x14, 0x24,			/* 0: mov rdx,[r12] */
			   0x4c, 0x89, 0xe1,				/* 4: mov rcx,r12 */
			   0x66, 0x48, 0x0f, 0x6e, 0xca,		/* 7: movq xmm1,rdx */
			   0x48, 0x89, 0xd0,				/* c: mov rax,rdx */
			   0xf2, 0x0f, 0x58, 0xc8,			/* f: addsd xmm1,xmm0 */
			   0x66, 0x48, 0x0f, 0x7e, 0xce,		/* 13: movq rsi,xmm1 */
			   0xf0, 0x48, 0x0f, 0xb1, 0x31,		/* 18: lock cmpxchg [rcx],rsi */
			   0x75, 0x01,					/* 1d: jne 20 */
			   0xc3,					/* 1f: ret */
			   0x48, 0x89, 0xc2,				/* 20: mov rdx,rax */
			   0xeb, 0xe2);					/* 23: jmp 7 */
		ASSERT_EQ(r.sites.n, 2, "sites");
		if (r.sites.n == 2)
			ASSERT_EQ(r.sites.v[0].reason, MARK_CAS_LOOP, "the load's reason (mov copy)");
		ASSERT_EQ(r.stats.cas_loop_reads, 1, "stats.cas_loop_reads");
		site_vec__free(&r.sites);

		/* The same with the address made by lea from the load's base and displacement. */
		r = DECODE(0x48, 0x8b, 0x55, 0x08,			/* 0: mov rdx,[rbp+8] */
			   0x48, 0x8d, 0x4d, 0x08,			/* 4: lea rcx,[rbp+8] */
			   0x66, 0x48, 0x0f, 0x6e, 0xca,		/* 8: movq xmm1,rdx */
			   0x48, 0x89, 0xd0,				/* d: mov rax,rdx */
			   0xf2, 0x0f, 0x58, 0xc8,			/* 10: addsd xmm1,xmm0 */
			   0x66, 0x48, 0x0f, 0x7e, 0xce,		/* 14: movq rsi,xmm1 */
			   0xf0, 0x48, 0x0f, 0xb1, 0x31,		/* 19: lock cmpxchg [rcx],rsi */
			   0x75, 0x01,					/* 1e: jne 21 */
			   0xc3,					/* 20: ret */
			   0x48, 0x89, 0xc2,				/* 21: mov rdx,rax */
			   0xeb, 0xe2);					/* 24: jmp 8 */
		ASSERT_EQ(r.sites.n, 2, "sites");
		if (r.sites.n == 2)
			ASSERT_EQ(r.sites.v[0].reason, MARK_CAS_LOOP, "the load's reason (lea copy)");
		site_vec__free(&r.sites);

		/* lea of another displacement: another address, the load stays plain. */
		r = DECODE(0x48, 0x8b, 0x55, 0x08, 0x48, 0x8d, 0x4d, 0x10,
			   0x66, 0x48, 0x0f, 0x6e, 0xca, 0x48, 0x89, 0xd0, 0xf2, 0x0f, 0x58, 0xc8,
			   0x66, 0x48, 0x0f, 0x7e, 0xce, 0xf0, 0x48, 0x0f, 0xb1, 0x31, 0x75, 0x01,
			   0xc3, 0x48, 0x89, 0xc2, 0xeb, 0xe2);
		ASSERT_EQ(r.sites.n, 2, "sites");
		if (r.sites.n == 2)
			ASSERT_EQ(r.sites.v[0].reason, MARK_NONE, "[rbp+8] is not [rbp+0x10]");
		site_vec__free(&r.sites);
	}

	TEST(cas_loop_read_address_copied_before_the_load) {
		/* gcc -O1 reduction on a double (DRB065): the cmpxchg's address made first. */
		r = DECODE(0x48, 0x8d, 0x4b, 0x08,			/* 0: lea rcx,[rbx+8] */
			   0x48, 0x8b, 0x53, 0x08,			/* 4: mov rdx,[rbx+8] */
			   0x66, 0x48, 0x0f, 0x6e, 0xf2,		/* 8: movq xmm6,rdx */
			   0xf2, 0x0f, 0x58, 0xf1,			/* d: addsd xmm6,xmm1 */
			   0x66, 0x48, 0x0f, 0x7e, 0xf6,		/* 11: movq rsi,xmm6 */
			   0x48, 0x89, 0xd0,				/* 16: mov rax,rdx */
			   0xf0, 0x48, 0x0f, 0xb1, 0x31,		/* 19: lock cmpxchg [rcx],rsi */
			   0x48, 0x39, 0xc2,				/* 1e: cmp rdx,rax */
			   0x75, 0x01,					/* 21: jne 24 */
			   0xc3,					/* 23: ret */
			   0x48, 0x89, 0xc2,				/* 24: mov rdx,rax */
			   0xeb, 0xdf);					/* 27: jmp 8 */
		ASSERT_EQ(r.sites.n, 2, "sites");
		if (r.sites.n == 2)
			ASSERT_EQ(r.sites.v[0].reason, MARK_CAS_LOOP, "the load's reason");
		ASSERT_EQ(r.stats.cas_loop_reads, 1, "stats.cas_loop_reads");
		site_vec__free(&r.sites);

		/* rbx moves between the copy and the load: another address, the load stays plain. */
		r = DECODE(0x48, 0x8d, 0x4b, 0x08,			/* 0: lea rcx,[rbx+8] */
			   0x48, 0x83, 0xc3, 0x10,			/* 4: add rbx,0x10 */
			   0x48, 0x8b, 0x53, 0x08,			/* 8: mov rdx,[rbx+8] */
			   0x66, 0x48, 0x0f, 0x6e, 0xf2,		/* c: movq xmm6,rdx */
			   0xf2, 0x0f, 0x58, 0xf1,			/* 11: addsd xmm6,xmm1 */
			   0x66, 0x48, 0x0f, 0x7e, 0xf6,		/* 15: movq rsi,xmm6 */
			   0x48, 0x89, 0xd0,				/* 1a: mov rax,rdx */
			   0xf0, 0x48, 0x0f, 0xb1, 0x31,		/* 1d: lock cmpxchg [rcx],rsi */
			   0x48, 0x39, 0xc2,				/* 22: cmp rdx,rax */
			   0x75, 0x01,					/* 25: jne 28 */
			   0xc3,					/* 27: ret */
			   0x48, 0x89, 0xc2,				/* 28: mov rdx,rax */
			   0xeb, 0xdf);					/* 2b: jmp c */
		ASSERT_EQ(r.sites.n, 2, "sites");
		if (r.sites.n == 2)
			ASSERT_EQ(r.sites.v[0].reason, MARK_NONE, "[rbx+8] after rbx moved");
		ASSERT_EQ(r.stats.cas_loop_reads, 0, "stats.cas_loop_reads");
		site_vec__free(&r.sites);
	}

	TEST(fenced_store_is_seq_cst) {
		r = DECODE(0x89, 0x37,					/* 0: mov [rdi],esi */
			   0x0f, 0xae, 0xf0,				/* 2: mfence */
			   0x89, 0x37,					/* 5: mov [rdi],esi */
			   0xf0, 0x48, 0x83, 0x0c, 0x24, 0x00,		/* 7: lock or qword [rsp],0 */
			   0x89, 0x37,					/* d: mov [rdi],esi */
			   0xc3);					/* f: ret */
		ASSERT_EQ(r.sites.n, 3, "sites: the three stores, not the fence on the stack");
		if (r.sites.n == 3) {
			ASSERT_EQ(r.sites.v[0].reason, MARK_FENCED_STORE, "mov; mfence");
			ASSERT_TRUE(r.sites.v[0].desc.flags & KCSAND_SITE_TEACHES, "teaches");
			ASSERT_EQ(r.sites.v[0].insn_reason, MARK_FENCED_STORE, "kept by mark__reset");
			ASSERT_EQ(r.sites.v[1].reason, MARK_FENCED_STORE, "mov; lock or [rsp],0");
			ASSERT_EQ(r.sites.v[2].reason, MARK_NONE, "a store before ret");
			ASSERT_FALSE(r.sites.v[2].desc.flags & KCSAND_SITE_TEACHES, "plain");
		}
		site_vec__free(&r.sites);

		r = DECODE(0xf0, 0x83, 0x07, 0x01,			/* 0: lock add dword [rdi],1 */
			   0x87, 0x06,					/* 4: xchg [rsi],eax */
			   0x8b, 0x07,					/* 6: mov eax,[rdi] */
			   0xc3);					/* 8: ret */
		ASSERT_EQ(r.sites.n, 3, "sites");
		if (r.sites.n == 3) {
			ASSERT_TRUE(r.sites.v[0].desc.flags & KCSAND_SITE_TEACHES, "lock add teaches");
			ASSERT_TRUE(r.sites.v[1].desc.flags & KCSAND_SITE_TEACHES, "xchg teaches");
			ASSERT_FALSE(r.sites.v[2].desc.flags & KCSAND_SITE_TEACHES, "a load does not");
		}
		site_vec__free(&r.sites);
	}

	TEST(ttas_lock_load_is_plain) {
		/* A test-and-test-and-set lock: the tested 0 reaches rax, but no new value. */
		r = DECODE(0x8b, 0x05, 0x00, 0x01, 0x00, 0x00,		/* 0: mov eax,[rip+L] */
			   0x85, 0xc0,					/* 6: test eax,eax */
			   0x75, 0x0f,					/* 8: jne 19 */
			   0xba, 0x01, 0x00, 0x00, 0x00,		/* a: mov edx,1 */
			   0xf0, 0x0f, 0xb1, 0x15, 0xef, 0x00, 0x00, 0x00,
								/* f: lock cmpxchg [rip+L],edx */
			   0x75, 0xed,					/* 17: jne 6 */
			   0xc3);					/* 19: ret */
		ASSERT_EQ(r.sites.n, 2, "sites");
		if (r.sites.n == 2)
			ASSERT_EQ(r.sites.v[0].reason, MARK_NONE, "the lock's plain load");
		ASSERT_EQ(r.stats.cas_loop_reads, 0, "stats.cas_loop_reads");
		site_vec__free(&r.sites);
	}

	TEST(spin_wait_read_teaches) {
		/* gcc -O2: while (atomic_load_explicit(&head, acquire) == t) pause; */
		r = DECODE(0xeb, 0x02,					/* 0: jmp 4 */
			   0xf3, 0x90,					/* 2: pause */
			   0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00,	/* 4: mov rax,[rip+X] */
			   0x48, 0x39, 0xd8,				/* b: cmp rax,rbx */
			   0x74, 0xf2,					/* e: je 2 */
			   0xc3);					/* 10: ret */
		ASSERT_EQ(r.sites.n, 1, "sites");
		if (r.sites.n == 1) {
			ASSERT_EQ(r.sites.v[0].reason, MARK_SPIN_WAIT, "the polled load");
			ASSERT_EQ(r.sites.v[0].insn_reason, MARK_SPIN_WAIT, "kept by mark__reset");
			ASSERT_TRUE(r.sites.v[0].desc.flags & KCSAND_SITE_TEACHES, "teaches");
		}
		ASSERT_EQ(r.stats.spin_wait_reads, 1, "stats.spin_wait_reads");
		site_vec__free(&r.sites);

		/* while (!*flag); as cmp with memory. */
		r = DECODE(0x83, 0x3f, 0x00,				/* 0: cmp dword [rdi],0 */
			   0x74, 0xfb,					/* 3: je 0 */
			   0xc3);					/* 5: ret */
		ASSERT_EQ(r.sites.n, 1, "sites");
		if (r.sites.n == 1)
			ASSERT_EQ(r.sites.v[0].reason, MARK_SPIN_WAIT, "cmp [rdi],0 polled");
		site_vec__free(&r.sites);
	}

	TEST(spin_wait_loop_calls_are_noted) {
		/* gcc -O2: while (!stop) work(); use(); */
		r = DECODE(0x53,					/* 0: push rbx */
			   0xe8, 0x10, 0x00, 0x00, 0x00,		/* 1: call work */
			   0x8b, 0x05, 0x00, 0x01, 0x00, 0x00,		/* 6: mov eax,[rip+X] */
			   0x85, 0xc0,					/* c: test eax,eax */
			   0x74, 0xf1,					/* e: je 1 */
			   0xe8, 0x00, 0x00, 0x00, 0x00,		/* 10: call use (the exit's) */
			   0x5b,					/* 15: pop rbx */
			   0xc3);					/* 16: ret */
		ASSERT_EQ(r.sites.n, 1, "sites");
		if (r.sites.n == 1) {
			const struct kcsand_site *d = &r.sites.v[0].desc;

			ASSERT_EQ(r.sites.v[0].reason, MARK_SPIN_WAIT, "the polled load");
			/* work() returns to 6, the load's end is c; use()'s call is no loop's. */
			ASSERT_EQ(d->loop_ret[0], -6, "loop_ret[0]");
			ASSERT_EQ(d->loop_ret[1], -6, "loop_ret[1]: the same call");
			ASSERT_EQ(d->loop_ra_slot, 8, "the call pushes just below the load's rsp");
			ASSERT_EQ(d->frame_ra, 8, "the load's return address, above rbx");
		}
		ASSERT_EQ(r.stats.spin_wait_calls, 1, "stats.spin_wait_calls");
		site_vec__free(&r.sites);

		/* while ((c = *n) < end) process(c);: the call works on what was read. */
		r = DECODE(0x53,					/* 0: push rbx */
			   0x8b, 0x03,					/* 1: mov eax,[rbx] */
			   0x44, 0x39, 0xe0,				/* 3: cmp eax,r12d */
			   0x7d, 0x09,					/* 6: jge 11 */
			   0x89, 0xc7,					/* 8: mov edi,eax */
			   0xe8, 0x03, 0x00, 0x00, 0x00,		/* a: call process */
			   0xeb, 0xf0,					/* f: jmp 1 */
			   0x5b,					/* 11: pop rbx */
			   0xc3);					/* 12: ret */
		ASSERT_EQ(r.sites.n, 1, "sites");
		if (r.sites.n == 1) {
			ASSERT_EQ(r.sites.v[0].reason, MARK_SPIN_WAIT, "a polled load still");
			ASSERT_EQ(r.sites.v[0].desc.loop_ret[0], 0, "the value read is process()'s");
		}
		ASSERT_EQ(r.stats.spin_wait_reads, 1, "stats.spin_wait_reads");
		ASSERT_EQ(r.stats.spin_wait_calls, 0, "stats.spin_wait_calls, the value passed");
		site_vec__free(&r.sites);

		/* A loop that only pauses notes no call: its acquire is taken at the next event. */
		r = DECODE(0xeb, 0x02,					/* 0: jmp 4 */
			   0xf3, 0x90,					/* 2: pause */
			   0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00,	/* 4: mov rax,[rip+X] */
			   0x48, 0x39, 0xd8,				/* b: cmp rax,rbx */
			   0x74, 0xf2,					/* e: je 2 */
			   0xc3);					/* 10: ret */
		ASSERT_EQ(r.sites.n, 1, "sites");
		if (r.sites.n == 1)
			ASSERT_EQ(r.sites.v[0].desc.loop_ret[0], 0, "no call on the loop");
		ASSERT_EQ(r.stats.spin_wait_calls, 0, "stats.spin_wait_calls");
		site_vec__free(&r.sites);
	}

	/* A polled load its loop takes a lock for each time round stays plain (DRB193). */
	TEST(spin_wait_under_a_lock_is_plain) {
		static const uint8_t loop[] = {
			0x53,					/* 0: push rbx */
			0xeb, 0x05,				/* 1: jmp 8 */
			0xe8, 0x00, 0x01, 0x00, 0x00,		/* 3: call 0x1108 (unlock) */
			0xe8, 0x00, 0x02, 0x00, 0x00,		/* 8: call 0x120d (lock) */
			0x8b, 0x05, 0x00, 0x01, 0x00, 0x00,	/* d: mov eax,[rip+X] */
			0x85, 0xc0,				/* 13: test eax,eax */
			0x74, 0xec,				/* 15: je 3 */
			0x5b,					/* 17: pop rbx */
			0xc3,					/* 18: ret */
		};
		/* The history's table names the calls that take a lock; trylocks among them. */
		static const char *const locking[] = {
			"pthread_mutex_lock", "__pthread_mutex_lock", "pthread_mutex_trylock",
			"pthread_rwlock_clockrdlock", "pthread_cond_wait", "GOMP_critical_name_start",
			"omp_test_lock",
		};
		/* A semaphore's wait and a static's guard hold no lock the loop polls under. */
		static const char *const other[] = {
			"work", "sem_wait", "__cxa_guard_acquire", "pthread_mutex_unlock",
		};
		struct decode_opts o = { .call_name = lock_call_name,
					 .returns_locked = history__returns_locked };

		for (size_t i = 0; i < sizeof(locking) / sizeof(locking[0]); i++) {
			o.call_ctx = locking[i];
			r = decode_opts(loop, sizeof(loop), &o);
			ASSERT_EQ(r.sites.n, 1, locking[i]);
			if (r.sites.n == 1)
				ASSERT_TRUE(r.sites.v[0].reason != MARK_SPIN_WAIT, locking[i]);
			ASSERT_EQ(r.stats.spin_wait_locked, 1, locking[i]);
			ASSERT_EQ(r.stats.spin_wait_reads, 0, locking[i]);
			site_vec__free(&r.sites);
		}
		/* The same loop calling something else last: a spin-wait, as before. */
		for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
			o.call_ctx = other[i];
			r = decode_opts(loop, sizeof(loop), &o);
			ASSERT_EQ(r.stats.spin_wait_reads, 1, other[i]);
			ASSERT_EQ(r.stats.spin_wait_locked, 0, other[i]);
			site_vec__free(&r.sites);
		}
		/* A decoder nobody told which calls lock (the kernel's): a spin-wait. */
		o.call_ctx = "pthread_mutex_lock";
		o.returns_locked = NULL;
		r = decode_opts(loop, sizeof(loop), &o);
		ASSERT_EQ(r.stats.spin_wait_reads, 1, "no returns_locked");
		site_vec__free(&r.sites);
	}

	TEST(loops_that_move_or_store_are_not_spin_waits) {
		/* A search through an array: the index moves. */
		r = DECODE(0x8b, 0x04, 0x8f,				/* 0: mov eax,[rdi+rcx*4] */
			   0x39, 0xf0,					/* 3: cmp eax,esi */
			   0x74, 0x06,					/* 5: je d */
			   0x48, 0x83, 0xc1, 0x01,			/* 7: add rcx,1 */
			   0xeb, 0xf3,					/* b: jmp 0 */
			   0xc3);					/* d: ret */
		ASSERT_EQ(r.sites.n, 1, "sites");
		if (r.sites.n == 1)
			ASSERT_EQ(r.sites.v[0].reason, MARK_NONE, "a search");
		site_vec__free(&r.sites);

		/* A list walk: the load overwrites its own base. */
		r = DECODE(0x48, 0x8b, 0x3f,				/* 0: mov rdi,[rdi] */
			   0x48, 0x85, 0xff,				/* 3: test rdi,rdi */
			   0x75, 0xf8,					/* 6: jne 0 */
			   0xc3);					/* 8: ret */
		ASSERT_EQ(r.sites.n, 1, "sites");
		if (r.sites.n == 1)
			ASSERT_EQ(r.sites.v[0].reason, MARK_NONE, "a list walk");
		site_vec__free(&r.sites);

		/* sysbench's delay loop, for (c = 0; c < *loops; c++);: the counter moves. */
		r = DECODE(0x31, 0xc9,					/* 0: xor ecx,ecx */
			   0x83, 0xc1, 0x01,				/* 2: add ecx,1 */
			   0x39, 0x4b, 0x14,				/* 5: cmp [rbx+0x14],ecx */
			   0x77, 0xf8,					/* 8: ja 2 */
			   0xc3);					/* a: ret */
		ASSERT_EQ(r.sites.n, 1, "sites");
		if (r.sites.n == 1)
			ASSERT_EQ(r.sites.v[0].reason, MARK_NONE, "a delay loop");
		site_vec__free(&r.sites);

		/* A loop that stores what it loads. */
		r = DECODE(0x8b, 0x07,					/* 0: mov eax,[rdi] */
			   0x85, 0xc0,					/* 2: test eax,eax */
			   0x74, 0x04,					/* 4: je a */
			   0x89, 0x06,					/* 6: mov [rsi],eax */
			   0xeb, 0xf6,					/* 8: jmp 0 */
			   0xc3);					/* a: ret */
		ASSERT_EQ(r.sites.n, 2, "sites");
		if (r.sites.n == 2)
			ASSERT_EQ(r.sites.v[0].reason, MARK_NONE, "a copying loop");
		ASSERT_EQ(r.stats.spin_wait_reads, 0, "stats.spin_wait_reads");
		site_vec__free(&r.sites);
	}

	TEST(cas_loop_other_value_is_plain) {
		/* The load is only tested; the cmpxchg's expected value comes from [rsi]. */
		r = DECODE(0x48, 0x8b, 0x15, 0x00, 0x01, 0x00, 0x00,	/* 0: mov rdx,[rip+X] */
			   0x48, 0x85, 0xd2,				/* 7: test rdx,rdx */
			   0x75, 0x1c,					/* a: jne 28 */
			   0x48, 0x8b, 0x06,				/* c: mov rax,[rsi] */
			   0x66, 0x48, 0x0f, 0x6e, 0xc8,		/* f: movq xmm1,rax */
			   0xf2, 0x0f, 0x58, 0xc8,			/* 14: addsd xmm1,xmm0 */
			   0x66, 0x48, 0x0f, 0x7e, 0xc9,		/* 18: movq rcx,xmm1 */
			   0xf0, 0x48, 0x0f, 0xb1, 0x0d, 0xe1, 0x00, 0x00, 0x00,
								/* 1d: lock cmpxchg [rip+X],rcx */
			   0x75, 0xe4,					/* 26: jne c */
			   0xc3);					/* 28: ret */
		ASSERT_EQ(r.sites.n, 3, "sites");
		if (r.sites.n == 3)
			ASSERT_EQ(r.sites.v[0].reason, MARK_NONE, "the tested load stays plain");
		ASSERT_EQ(r.stats.cas_loop_reads, 0, "stats.cas_loop_reads");
		site_vec__free(&r.sites);
	}
}

static struct target_obj *self_obj;

static void elf_write_global(void)
{
	const struct elf_func *f = NULL;
	const struct site *s;
	uint8_t file_bytes[16];
	uintptr_t runtime;
	int fd;

	if (!ASSERT_ZERO(target_obj__open("/proc/self/exe", &self_obj), "target_obj__open"))
		return;
	for (size_t i = 0; i < self_obj->nr_funcs; i++)
		if (!strcmp(self_obj->funcs[i].name, "write_global"))
			f = &self_obj->funcs[i];
	if (!ASSERT_TRUE(f, "write_global in funcs"))
		return;

	ASSERT_EQ(target_obj__decode(self_obj, "write_global", NULL), 1, "matched functions");
	if (!ASSERT_EQ(self_obj->sites.n, 1, "sites"))
		return;
	s = &self_obj->sites.v[0];
	ASSERT_EQ(s->desc.flags, KCSAND_SITE_WRITE, "flags");
	ASSERT_EQ(s->desc.size, 4, "size");
	ASSERT_EQ(s->desc.base, KCSAND_REG_RIP, "base");
	ASSERT_TRUE(&self_obj->funcs[s->func] == f, "site's func");
	ASSERT_TRUE(target_obj__func_at(self_obj, s->vaddr) == f, "func_at(site)");
	ASSERT_TRUE(target_obj__func_at(self_obj, f->vaddr + f->size) != f, "func_at(end)");

	/* The address the BPF side computes is the variable's. */
	runtime = (uintptr_t)write_global - f->vaddr + s->vaddr;
	ASSERT_EQ(runtime + s->desc.insn_len + s->desc.disp, (uintptr_t)&test_global,
		  "effective address");
	if (!self_obj->pie)
		ASSERT_EQ((uintptr_t)write_global, f->vaddr, "non-PIE vaddr");

	/* file_off is where a uprobe goes: the same bytes as in memory. */
	fd = open("/proc/self/exe", O_RDONLY);
	if (!ASSERT_TRUE(fd >= 0, "open"))
		return;
	ASSERT_EQ(pread(fd, file_bytes, s->desc.insn_len, (off_t)s->file_off), s->desc.insn_len,
		  "pread");
	ASSERT_ZERO(memcmp(file_bytes, (const void *)runtime, s->desc.insn_len),
		  "bytes at file_off == bytes in memory");
	close(fd);
}

static void elf_decode_all(void)
{
	struct target_obj *obj = self_obj;
	int n = target_obj__decode(obj, "*", NULL);

	ASSERT_EQ(n, obj->nr_funcs, "every function matched");
	ASSERT_EQ(target_obj__decode(obj, NULL, NULL), n, "NULL globs match all");
	ASSERT_EQ(target_obj__decode(obj, "", NULL), n, "empty globs match all");
	ASSERT_TRUE(obj->sites.n > 0, "sites > 0");
	ASSERT_EQ(obj->stats.sites, obj->sites.n, "stats.sites == n");
	ASSERT_EQ(obj->stats.funcs, n, "stats.funcs");
	ASSERT_TRUE(obj->stats.funcs_without_sites < obj->stats.funcs, "funcs_without_sites");
	ASSERT_EQ(obj->stats.decode_errors, 0, "stats.decode_errors");
	for (size_t i = 1; i < obj->nr_funcs; i++)
		if (!ASSERT_TRUE(obj->funcs[i - 1].vaddr < obj->funcs[i].vaddr, "funcs sorted"))
			return;
	for (size_t i = 0; i < obj->sites.n; i++) {
		const struct site *s = &obj->sites.v[i];
		const struct elf_func *f = &obj->funcs[s->func];
		uint64_t off;

		if (!ASSERT_TRUE(s->vaddr >= f->vaddr && s->vaddr < f->vaddr + f->size,
				 "site within its function"))
			return;
		if (!ASSERT_ZERO(target_obj__vaddr_to_off(obj, s->vaddr, &off), "vaddr_to_off") ||
		    !ASSERT_EQ(off, s->file_off, "file_off"))
			return;
		if (!ASSERT_TRUE(s->desc.size >= 1 && s->desc.size <= KCSAND_MAX_ACCESS,
				 "size in range"))
			return;
	}
}

static void elf_not_elf(void)
{
	char path[] = "/tmp/kcsand-test-XXXXXX";
	struct target_obj *obj = (struct target_obj *)1;
	int fd = mkstemp(path);

	if (!ASSERT_TRUE(fd >= 0, "mkstemp"))
		return;
	ASSERT_EQ(write(fd, "not an ELF file\n", 16), 16, "write");
	close(fd);
	ASSERT_EQ(target_obj__open(path, &obj), -ENOEXEC, "target_obj__open");
	ASSERT_TRUE(obj == NULL, "*out cleared");
	unlink(path);
}

/* A copy of this binary with a 16-bit ELF header field (little endian) changed. */
static int open_patched(uint16_t field_off, uint16_t value)
{
	char path[] = "/tmp/kcsand-test-XXXXXX";
	struct target_obj *obj = NULL;
	uint8_t buf[4096];
	int in, out, err;
	ssize_t n;

	in = open("/proc/self/exe", O_RDONLY);
	out = mkstemp(path);
	if (!ASSERT_TRUE(in >= 0 && out >= 0, "open/mkstemp"))
		return 0;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (!ASSERT_EQ(write(out, buf, n), n, "write"))
			break;
	close(in);
	buf[0] = value & 0xff;
	buf[1] = value >> 8;
	ASSERT_EQ(pwrite(out, buf, 2, field_off), 2, "pwrite");
	close(out);
	err = target_obj__open(path, &obj);
	target_obj__free(obj);
	unlink(path);
	return err;
}

static void test_elf(void)
{
	struct target_obj *obj = NULL;

	write_global_ptr(1);

	TEST(elf_write_global)
		elf_write_global();

	if (self_obj) {
		TEST(elf_glob_list) {
			ASSERT_EQ(target_obj__decode(self_obj, "no_such_fn_*, write_global", NULL),
				  1, "matched");
			ASSERT_EQ(self_obj->sites.n, 1, "sites");
		}

		TEST(elf_glob_separators_only) {
			/* Like "": no pattern at all selects every function. */
			ASSERT_EQ(target_obj__decode(self_obj, " , ,", NULL), self_obj->nr_funcs,
				  "matched");
		}

		TEST(elf_glob_pattern) {
			ASSERT_EQ(target_obj__decode(self_obj, "write_globa?", NULL), 1, "matched");
			ASSERT_EQ(target_obj__decode(self_obj, "write_gl*", NULL), 1, "matched");
		}

		TEST(elf_glob_no_match) {
			ASSERT_EQ(target_obj__decode(self_obj, "no_such_function_xyz", NULL), 0,
				  "matched");
			ASSERT_EQ(self_obj->sites.n, 0, "sites");
			ASSERT_EQ(self_obj->stats.sites, 0, "stats.sites");
		}

		TEST(elf_decode_all)
			elf_decode_all();
	}
	target_obj__free(self_obj);

	TEST(elf_not_elf)
		elf_not_elf();

	TEST(elf_not_x86_64)
		ASSERT_EQ(open_patched(18, 183 /* EM_AARCH64 */), -ENOEXEC, "target_obj__open");

	TEST(elf_relocatable)
		ASSERT_EQ(open_patched(16, 1 /* ET_REL */), -ENOEXEC, "target_obj__open");

	TEST(elf_missing)
		ASSERT_EQ(target_obj__open("/nonexistent/kcsand-test", &obj), -ENOENT,
			  "target_obj__open");
}

/* decode__gpr_writes(): what hw/insn.c asks of an instruction it found by its end. */
static void test_gpr_writes(void)
{
	static const uint8_t load[] = { 0x8b, 0x47, 0x08 };		/* mov eax,[rdi+8] */
	static const uint8_t store[] = { 0x48, 0x89, 0x07 };		/* mov [rdi],rax */
	static const uint8_t xchg[] = { 0x49, 0x87, 0x0c, 0x24 };	/* xchg [r12],rcx */
	static const uint8_t pop[] = { 0x41, 0x5c };			/* pop r12: rsp hidden */

	TEST(gpr_writes) {
		ASSERT_EQ(decode__gpr_writes(load, sizeof(load)), 1 << 0, "mov eax,[rdi+8]: rax");
		ASSERT_EQ(decode__gpr_writes(store, sizeof(store)), 0, "mov [rdi],rax: none");
		ASSERT_EQ(decode__gpr_writes(xchg, sizeof(xchg)), 1 << 1, "xchg [r12],rcx: rcx");
		ASSERT_EQ(decode__gpr_writes(pop, sizeof(pop)), (1 << 12) | (1 << 4),
			  "pop r12: r12 and rsp");
		ASSERT_EQ(decode__gpr_writes(load, 0), -EINVAL, "no bytes");
		ASSERT_EQ(decode__gpr_writes(load, 2), -EINVAL, "cut short");
	}
}

/*
 * decode__insn() and decode__call_before(): what the history asks of a sync
 * function's code (a locked first instruction, its rets) and the symbolizer
 * of a return address (a call ends right before it).
 */
/*
 * A locked RMW's release published ahead of it (decode.c, locked_ahead):
 * on the instructions that fall or jump into it, where its address
 * registers still hold its address.
 */
static void test_locked_ahead(void)
{
	struct result r;

	TEST(lock_after_store_has_its_probe_ahead) {
		r = DECODE(0x48, 0x89, 0x37,		/* mov [rdi],rsi: the message */
			   0xf0, 0x83, 0x42, 0x08, 0x01, /* lock add dword [rdx+8],1 */
			   0xc3);			/* ret */
		ASSERT_EQ(r.sites.n, 2, "the store and the locked add");
		if (r.sites.n == 2) {
			ASSERT_EQ(r.sites.v[0].nr_ahead, 0, "a plain store has none");
			ASSERT_EQ(r.sites.v[1].nr_ahead, 1, "one probe ahead: the store");
			ASSERT_EQ(r.sites.v[1].ahead[0], 3, "3 bytes before the locked add");
		}
		ASSERT_EQ(r.stats.locked_late, 0, "no path into it without one");
		site_vec__free(&r.sites);
	}

	TEST(lock_after_its_base_is_loaded_is_late) {
		r = DECODE(0x48, 0x8b, 0x47, 0x08,	/* mov rax,[rdi+8]: the lock's base */
			   0xf0, 0x83, 0x00, 0x01,	/* lock add dword [rax],1 */
			   0xc3);
		ASSERT_EQ(r.sites.n, 2, "the load and the locked add");
		if (r.sites.n == 2)
			ASSERT_EQ(r.sites.v[1].nr_ahead, 0, "rax is not its address before the mov");
		ASSERT_EQ(r.stats.locked_late, 1, "counted late");
		site_vec__free(&r.sites);
	}

	TEST(lock_at_a_branch_target_has_one_per_path) {
		r = DECODE(0x85, 0xf6,			/* test esi,esi */
			   0x74, 0x03,			/* je +3: to the lock */
			   0x48, 0x89, 0x37,		/* mov [rdi],rsi */
			   0xf0, 0x83, 0x42, 0x08, 0x01, /* lock add dword [rdx+8],1 */
			   0xc3);
		ASSERT_EQ(r.sites.n, 2, "the store and the locked add");
		if (r.sites.n == 2) {
			ASSERT_EQ(r.sites.v[1].nr_ahead, 2, "the store and the je");
			ASSERT_EQ(r.sites.v[1].ahead[0], 5, "the je, 5 bytes before");
			ASSERT_EQ(r.sites.v[1].ahead[1], 3, "the store, 3 bytes before");
		}
		ASSERT_EQ(r.stats.locked_late, 0, "every path has one");
		site_vec__free(&r.sites);
	}

	TEST(lock_that_starts_its_function_is_late) {
		r = DECODE(0xf0, 0x83, 0x07, 0x01,	/* lock add dword [rdi],1 */
			   0xc3);
		ASSERT_EQ(r.sites.n, 1, "the locked add");
		if (r.sites.n == 1)
			ASSERT_EQ(r.sites.v[0].nr_ahead, 0, "its callers are not in the function");
		ASSERT_EQ(r.stats.locked_late, 1, "counted late");
		site_vec__free(&r.sites);
	}
}

static void test_insn_info(void)
{
	/* lock cmpxchg [rdi],edx */
	static const uint8_t lock_cmpxchg[] = { 0xf0, 0x0f, 0xb1, 0x17 };
	static const uint8_t ret_imm[] = { 0xc2, 0x08, 0x00 };		/* ret 8 */
	/* mov eax,1; call rel32; then the return address */
	static const uint8_t direct[] = { 0xb8, 0x01, 0x00, 0x00, 0x00,
					  0xe8, 0x10, 0x00, 0x00, 0x00 };
	/* call [rip+0x10] (ff 15 disp32), 6 bytes */
	static const uint8_t indirect[] = { 0x90, 0xff, 0x15, 0x10, 0x00, 0x00, 0x00 };
	static const uint8_t jmp[] = { 0xe9, 0x10, 0x00, 0x00, 0x00 };	/* jmp rel32 */
	static const uint8_t call_reg[] = { 0xff, 0xd0 };		/* call rax */
	struct insn_info in;

	TEST(insn_info) {
		if (ASSERT_OK(decode__insn(lock_cmpxchg, sizeof(lock_cmpxchg), &in), "decode")) {
			ASSERT_EQ(in.length, 4, "lock cmpxchg: length");
			ASSERT_TRUE(in.locked, "lock cmpxchg: locked");
			ASSERT_FALSE(in.ret || in.call, "lock cmpxchg: neither ret nor call");
		}
		if (ASSERT_OK(decode__insn(ret_imm, sizeof(ret_imm), &in), "decode")) {
			ASSERT_EQ(in.length, 3, "ret 8: length");
			ASSERT_TRUE(in.ret, "ret 8: a return");
			ASSERT_FALSE(in.locked, "ret 8: not locked");
		}
		ASSERT_EQ(decode__insn(lock_cmpxchg, 2, &in), -EINVAL, "cut short");
		ASSERT_EQ(decode__insn(lock_cmpxchg, 0, &in), -EINVAL, "no bytes");
	}

	TEST(call_before) {
		ASSERT_TRUE(decode__call_before(direct + sizeof(direct), sizeof(direct)),
			    "call rel32 ends there");
		ASSERT_TRUE(decode__call_before(indirect + sizeof(indirect), sizeof(indirect)),
			    "call [rip+disp32] ends there");
		ASSERT_TRUE(decode__call_before(call_reg + 2, 2), "call rax ends there");
		ASSERT_FALSE(decode__call_before(direct + 5, 5), "mov eax,1 is no call");
		ASSERT_FALSE(decode__call_before(jmp + sizeof(jmp), sizeof(jmp)), "jmp is no call");
		ASSERT_FALSE(decode__call_before(direct + sizeof(direct), 4),
			     "no reading before what is available");
	}
}

int main(void)
{
	test_instructions();
	test_locked_ahead();
	test_gpr_writes();
	test_insn_info();
	test_frames();
	test_shapes();
	test_elf();
	return test_summary();
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Instruction sites: the memory-access instructions of an ELF object's
 * functions, decoded with Zydis and described for the BPF engine.
 */
#ifndef KCSAND_DECODE_H
#define KCSAND_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "kcsand.h"

/* Probes ahead of one locked site, at most: a path beyond them publishes its release late. */
#define SITE_AHEAD_MAX	4

/* A probe site as the daemon knows it: the BPF descriptor plus where it lives. */
struct site {
	struct kcsand_site desc;
	uint64_t vaddr;		/* link-time virtual address of the instruction */
	uint64_t file_off;	/* offset in the ELF file: what a uprobe takes */
	uint32_t func;		/* index into the object's funcs[] */
	uint32_t reason;	/* why the site is marked (enum mark_reason), 0 = plain */
	uint32_t insn_reason;	/* the reason the instruction alone gives (lock, xchg), or 0 */
	/*
	 * A locked RMW's probes ahead of it (decode.c, locked_ahead): how far
	 * it is from each instruction that runs or jumps into it.
	 */
	int32_t ahead[SITE_AHEAD_MAX];
	uint8_t nr_ahead;
};

enum mark_reason {
	MARK_NONE = 0,
	MARK_LOCK_PREFIX,	/* lock-prefixed read-modify-write */
	MARK_XCHG,		/* xchg with memory: implicitly locked */
	MARK_CAS_LOOP,		/* the plain load that starts a lock cmpxchg loop on its address */
	/* Set by mark__apply() (mark.h), from debug info, source and the marks file: */
	MARK_INLINE_ACCESSOR,	/* inside an atomic/once accessor (atomic_read, std::atomic) */
	MARK_QUALIFIER,		/* static target is an _Atomic or volatile object */
	MARK_SOURCE_MACRO,	/* READ_ONCE(), atomic_load_explicit(), data_race() ... */
	MARK_MARKS_FILE,	/* named in the marks file (--marks) */
	MARK_IO_ACCESSOR,	/* inside readl/writel/ioread* ...: MMIO, never watched */
	/* From the instructions again, last so that cached verdicts keep their numbers: */
	MARK_FENCED_STORE,	/* a store a full fence follows (mov; mfence): seq_cst */
	MARK_CXA_GUARD,		/* a load of a C++ static's guard variable (_ZGV*): an acquire */
	MARK_SPIN_WAIT,		/* a load a loop polls until its value changes: an acquire */
	MARK_REASON_COUNT,
};

/* "lock prefix", "inline accessor", ...; "plain" for MARK_NONE (defined in mark.c). */
const char *mark_reason__name(uint32_t reason);

struct elf_func {
	char *name;
	uint64_t vaddr;
	uint64_t size;
	/*
	 * size is only an upper bound: a kernel function that kallsyms sizes
	 * (the next symbol's address) and no debug file's symbol table does.
	 */
	bool bounded;
	uint64_t decoded;	/* kernel: bytes decoded from its start, for -v */
};

/* What decoding found and left out; summed over all decoded functions. */
struct decode_stats {
	uint64_t insns;			/* instructions decoded */
	uint64_t bytes;			/* their bytes: to where padding or an error ended each */
	uint64_t sites;			/* sites kept */
	uint64_t marked;		/* of which marked (atomic) */
	uint64_t skipped_stack;		/* rsp-based, and rbp-based where rbp is the frame */
	uint64_t stack_sites;		/* sites kept on stack slots whose address escapes */
	uint64_t skipped_tls;		/* fs/gs-relative operands */
	uint64_t unencodable;		/* string ops, gathers/scatters, > KCSAND_MAX_ACCESS */
	uint64_t lock_at_target;	/* locked accesses left out: the next insn is a branch target */
	uint64_t misemulated;		/* VEX/EVEX insns the kernel's probes would emulate wrongly,
					 * and locked accesses before one (or a locked one) */
	uint64_t refused;		/* insns the running kernel's uprobes refuse (ENOTSUPP) */
	uint64_t cas_loop_reads;	/* plain loads marked as a compare-and-swap loop's read */
	uint64_t spin_wait_reads;	/* plain loads marked as a spin-wait's (spinwait.c) */
	uint64_t spin_wait_calls;	/* of them, in loops that call functions (loop_ret) */
	uint64_t spin_wait_locked;	/* polled loads left plain: their loop takes a lock first */
	uint64_t locked_late;		/* locked sites reached on a path with no probe ahead */
	uint64_t decode_errors;		/* bytes Zydis could not decode (skipped to the next symbol) */
	uint64_t funcs;			/* functions decoded */
	uint64_t funcs_without_sites;
};

struct decode_opts {
	bool keep_stack;	/* keep rsp/rbp-based operands (default: skip) */
	/*
	 * Keep fs/gs-relative operands (default: skip).  struct kcsand_site has
	 * no segment: the engine must add the segment base itself.
	 */
	bool keep_tls;
	bool skip_gs;		/* kernel: gs-relative is per-CPU, skipped even with keep_tls */
	/*
	 * Probe lock-prefixed instructions where they are (kprobes can); by
	 * default (uprobes) they are probed at the next instruction and
	 * es/cs/ds/ss-prefixed ones are left out as unencodable.
	 */
	bool probe_locked;
	/*
	 * Kernel functions are sized from kallsyms (next symbol), so the last
	 * one of a module runs into the zero-filled rest of its page: stop at
	 * int3 padding or at "add [rax],al" (00 00), which compilers never emit.
	 */
	bool stop_at_padding;
	/*
	 * Find the object's direct calls and jumps to the locked sites that
	 * start their function (target_obj.c, entry_locked_aheads): probes
	 * ahead only the history uses, and a second pass over every function.
	 */
	bool entry_aheads;
	/*
	 * The function a direct call to link-time address target calls (a PLT
	 * stub's, or one of the object's own), or NULL; set by
	 * target_obj__decode().  The spin-wait rule asks it (spinwait.c).
	 */
	const char *(*call_name)(const void *ctx, uint64_t target);
	const void *call_ctx;
	/*
	 * Whether the function func returns holding a lock (a mutex's lock, a
	 * condition's wait): the history's table says, which sites/ may not
	 * include; set by the engine.  NULL: no call takes a lock.  The
	 * spin-wait rule asks it of call_name's answers (spinwait.c).
	 */
	bool (*returns_locked)(const char *func);
};

/* A growable vector of sites. */
struct site_vec {
	struct site *v;
	size_t n, cap;
};

/* Append a copy of *s, growing the vector; 0 or -ENOMEM. */
int site_vec__push(struct site_vec *vec, const struct site *s);
/* Free the storage and leave an empty, reusable vector. */
void site_vec__free(struct site_vec *vec);

/*
 * Decode one function's code (len bytes loaded at vaddr) and append its
 * memory-access sites to out, with file_off = vaddr + (file_delta) left to
 * the caller (set to vaddr here).  Returns 0 or a negative errno.
 */
int decode__function(const uint8_t *code, size_t len, uint64_t vaddr, uint32_t func_idx,
		     const struct decode_opts *opts, struct site_vec *out,
		    struct decode_stats *stats);

/*
 * Every direct call and jump in code[0..len) (at vaddr), to found() with
 * its address and its target's: where a locked site that starts its
 * function is reached from (target_obj.c).  -EINVAL if Zydis fails to start.
 */
int decode__direct_branches(const uint8_t *code, size_t len, uint64_t vaddr,
			    void (*found)(void *arg, uint64_t from, uint64_t to), void *arg);

/*
 * The GPRs the instruction at code[0..len) writes as register operands,
 * hidden ones included: bit n for GPR n in encoding order (rax = 0, as
 * KCSAND_REG_RAX + n).  -EINVAL if it cannot be decoded.
 */
int decode__gpr_writes(const uint8_t *code, size_t len);

/* What other folders ask of one instruction, with no Zydis type outside sites/. */
struct insn_info {
	uint8_t length;		/* bytes */
	bool locked;		/* lock prefix */
	bool call;		/* a call, direct or indirect */
	bool ret;		/* a return (ret, ret imm16) */
};
/* Decode the first instruction of code[0..len); -EINVAL if it cannot be. */
int decode__insn(const uint8_t *code, size_t len, struct insn_info *out);
/*
 * Whether a call instruction ends right at end, reading at most avail
 * bytes before it: is a return address the one a call pushed?
 */
bool decode__call_before(const uint8_t *end, size_t avail);

/* An ELF object opened for decoding (target_obj.c). */
struct target_obj {
	char *path;
	bool pie;			/* ET_DYN: runtime address = bias + vaddr */
	struct elf_func *funcs;		/* functions in executable sections, sorted by vaddr */
	size_t nr_funcs;
	char funcs_from[320];		/* where: "symtab", "debug file PATH", "dynsym and eh_frame" */
	struct site_vec sites;		/* filled by target_obj__decode() */
	struct decode_stats stats;
	void *priv;			/* libelf handle and segment table */
};

/* Open an ELF object; fails with a message (pr_warn) for a non-ELF or non-x86-64 file. */
int target_obj__open(const char *path, struct target_obj **out);
/*
 * Has the file changed since target_obj__open(): rewritten in place (or a
 * writer waits on our lease), or the path now names another file or none?
 * Says so once (pr_warn).  Returns 1 if so, else 0; 0 for kernel objects.
 */
int target_obj__changed(struct target_obj *obj);
/* Lets a writer waiting on the file go on; call once its probes are removed. */
void target_obj__release(struct target_obj *obj);
/*
 * The path to attach probes through: /proc/self/fd/N, the file decoded,
 * whatever its path names now.  -ESTALE (said with pr_warn) if the file changed.
 */
int target_obj__attach_path(struct target_obj *obj, char *buf, size_t len);
/* The device and inode of the file decoded; -ENOENT for kernel objects. */
int target_obj__file_id(const struct target_obj *obj, dev_t *dev, ino_t *ino);
/*
 * Decode the functions whose names match one of the comma-separated shell
 * globs (NULL or "" = every function) into obj->sites.
 * Each call replaces the sites and stats of the previous one.
 * Returns the number of functions that matched, or a negative errno.
 */
int target_obj__decode(struct target_obj *obj, const char *globs, const struct decode_opts *opts);
/* The function a site of obj is in, or NULL. */
static inline const struct elf_func *target_obj__site_func(const struct target_obj *obj,
							     const struct site *s)
{
	return s->func < obj->nr_funcs ? &obj->funcs[s->func] : NULL;
}
/* The function containing vaddr, or NULL. */
const struct elf_func *target_obj__func_at(const struct target_obj *obj, uint64_t vaddr);
/* Map a link-time virtual address to a file offset through PT_LOAD; -ERANGE if unmapped. */
int target_obj__vaddr_to_off(const struct target_obj *obj, uint64_t vaddr, uint64_t *off);
void target_obj__free(struct target_obj *obj);

#endif

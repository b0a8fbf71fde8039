// SPDX-License-Identifier: GPL-2.0-only
/*
 * The access a debug register trapped: x86 traps after the instruction, so
 * the access is the instruction that ends at the trap's ip.  Instructions
 * have no fixed length and cannot be decoded backwards: the function that
 * holds it is decoded from its start, with the site decoder, and the site
 * that ends at the ip is the access (bpf/hwbp.bpf.h asks for it once per ip).
 * User code is read from its ELF file, kernel code from /proc/kcore.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hwbp.h"
#include "sites/decode.h"
#include "sites/kcore.h"
#include "sites/ksyms.h"

/* Is reg (enum kcsand_reg) a GPR that writes has its bit set for? */
static bool written(int writes, unsigned int reg)
{
	return reg >= KCSAND_REG_RAX && reg <= KCSAND_REG_R15 &&
	       (writes & (1 << (reg - KCSAND_REG_RAX)));
}

/* Does the instruction in code[0..n) write a register its address is computed from? */
static bool clobbers_address(const uint8_t *code, size_t n, const struct site *s)
{
	int writes = decode__gpr_writes(code, n);

	if (writes < 0)
		return true;	/* unreadable now: do not trust a recomputed address */
	return written(writes, s->desc.base) || written(writes, s->desc.index);
}

/* The same for the instruction at s's offset in the file path. */
static bool clobbers_address_in(const char *path, const struct site *s)
{
	uint8_t code[16];
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = pread(fd, code, sizeof(code), (off_t)s->file_off);
		close(fd);
	}
	return clobbers_address(code, n > 0 ? (size_t)n : 0, s);
}

/*
 * The site of sites that ends at next, with KCSAND_SITE_ADDR_LOST where it
 * overwrites its own address registers; -ENOENT if none does.
 */
static const struct site *site_ending_at(const struct site_vec *sites, uint64_t next)
{
	for (size_t i = 0; i < sites->n; i++) {
		const struct site *s = &sites->v[i];

		if (s->vaddr + s->desc.insn_len == next && !s->desc.probe_delta)
			return s;
	}
	return NULL;
}

int hwbp__insn_before(const char *path, uint64_t next, struct kcsand_site *out)
{
	const struct decode_opts opts = { .keep_stack = true, .keep_tls = true,
					  .probe_locked = true };
	const struct elf_func *f;
	struct target_obj *obj;
	int err;

	memset(out, 0, sizeof(*out));
	err = target_obj__open(path, &obj);
	if (err)
		return err;
	f = target_obj__func_at(obj, next - 1);
	err = f ? target_obj__decode(obj, f->name, &opts) : -ENOENT;
	if (err > 0)
		err = -ENOENT;
	if (err == -ENOENT) {
		const struct site *s = site_ending_at(&obj->sites, next);

		if (s) {
			*out = s->desc;
			if (clobbers_address_in(path, s))
				out->flags |= KCSAND_SITE_ADDR_LOST;
			err = 0;
		}
	}
	target_obj__free(obj);
	return err;
}

/* Kernel functions are decoded whole to find one instruction: bound the read. */
#define KFUNC_MAX_BYTES	(64u << 10)

int hwbp__kinsn_before(const struct kcore *kc, const struct ksyms *ks, uint64_t next,
		       struct kcsand_site *out)
{
	/* As the kernel's own sites are decoded (sites/ktarget.c), rsp/rbp kept. */
	const struct decode_opts opts = { .keep_stack = true, .skip_gs = true,
					  .probe_locked = true, .stop_at_padding = true };
	const struct ksym *k = ksyms__map_addr(ks, next - 1);
	struct decode_stats stats = {};
	struct site_vec sites = {};
	const struct site *s;
	size_t len;
	uint8_t *code;
	int err;

	memset(out, 0, sizeof(*out));
	if (!k)
		return -ENOENT;
	len = k->size < KFUNC_MAX_BYTES ? (size_t)k->size : KFUNC_MAX_BYTES;
	if (next - k->addr > len)
		return -ERANGE;
	code = malloc(len);
	if (!code)
		return -ENOMEM;
	err = kcore__read(kc, k->addr, code, len);
	if (!err)
		err = decode__function(code, len, k->addr, 0, &opts, &sites, &stats);
	s = err ? NULL : site_ending_at(&sites, next);
	if (s) {
		*out = s->desc;
		if (clobbers_address(code + (s->vaddr - k->addr), len - (s->vaddr - k->addr), s))
			out->flags |= KCSAND_SITE_ADDR_LOST;
	} else if (!err) {
		err = -ENOENT;
	}
	site_vec__free(&sites);
	free(code);
	return err;
}

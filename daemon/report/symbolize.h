/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Symbolization of report stacks: runtime addresses of a process to
 * "func+0xoff/0xsize" and, where DWARF is present, "file:line", read from
 * the ELF files themselves (symbol tables through libdwfl, lines through
 * libdw).  An opaque handle caches one libdwfl module per file.
 */
#ifndef KCSAND_SYMBOLIZE_H
#define KCSAND_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct symbolizer;

struct sym_info {
	const char *func;	/* NULL when no symbol covers the address */
	uint64_t off;		/* address - symbol start */
	uint64_t size;		/* symbol size */
	const char *file;	/* source file, or NULL without DWARF */
	int line;		/* 0 when unknown */
	int column;
	const char *module;	/* path of the ELF file the address lies in, or NULL */
	uint64_t mod_vaddr;	/* the address as a link-time address of that file */
};

struct symbolizer *symbolizer__new(void);
void symbolizer__free(struct symbolizer *s);

/*
 * Look up a link-time virtual address in the ELF file at path.  For a
 * return address (is_ra), the line is that of the call (vaddr - 1) while
 * func+off stays that of vaddr.  Strings live as long as the symbolizer.
 */
int symbolizer__lookup_file(struct symbolizer *s, const char *path, uint64_t vaddr, bool is_ra,
			    struct sym_info *out);

/*
 * Source line of func+off in an ELF file (a vmlinux or a module's .ko with
 * DWARF): the function is found by name, so neither KASLR nor a module's
 * load address matters.  out->file/line stay empty when not found.
 */
int symbolizer__lookup_func_line(struct symbolizer *s, const char *path, const char *func,
				 uint64_t off, bool is_ra, struct sym_info *out);

/*
 * Address spaces.  An object known to be loaded at bias in pid (runtime =
 * bias + vaddr) is registered with add_bias, which needs no /proc access
 * and so works after the process has exited; other objects are found in
 * /proc/PID/maps, read on first need and again when an address is not
 * covered.
 */
int symbolizer__proc_add_bias(struct symbolizer *s, pid_t pid, const char *path, uint64_t bias);
int symbolizer__proc_lookup(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_ra,
			    struct sym_info *out);
void symbolizer__proc_forget(struct symbolizer *s, pid_t pid);
/*
 * Forget the processes that have exited: a service that outlives many
 * target processes would otherwise keep the maps of each one it reported.
 * A late report of one of them reads what it needs again.  Returns how
 * many were forgotten.
 */
size_t symbolizer__forget_exited(struct symbolizer *s);

/*
 * Is ra a return address in pid: does a call instruction end right before
 * it, in an executable mapping of a file?  1 yes, 0 no (a word a
 * frame-pointer walk read through a function without frame pointers),
 * negative errno when it cannot be told (-ENOENT: the process is gone and
 * no registered object covers ra).
 */
int symbolizer__proc_after_call(struct symbolizer *s, pid_t pid, uint64_t ra);

/*
 * Format as KCSAN's %pS does, "func+0xoff/0xsize", followed by " file:line"
 * when known; an address with no symbol prints as "0x<hex>", followed by
 * " (file+0xvaddr)" when the file is known.  Returns the length.
 */
int sym_info__format(const struct sym_info *si, uint64_t addr, bool with_line, char *buf,
		     size_t len);

#endif

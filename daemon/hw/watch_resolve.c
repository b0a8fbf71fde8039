// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a watch spec's SYMBOL names (watch_spec.h parses the spec): a
 * variable of a target's ELF symbol table at its load bias in the process,
 * or a kernel variable by its kallsyms name.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "hwbp.h"
#include "hwbp_int.h"
#include "sites/elf_symbols.h"
#include "sites/ksyms.h"
#include "util/print.h"
#include "util/proc_maps.h"

/* Where a file's offset 0 is mapped, found in /proc/PID/maps. */
struct file_start {
	const char *real;	/* the file, a resolved path */
	uint64_t start;
};

static int file_start_in(const struct proc_map *m, void *arg)
{
	struct file_start *fs = arg;

	if (m->pgoff || strcmp(m->path, fs->real))
		return 0;
	fs->start = m->start;
	return 1;
}

/* Where path is mapped in pid: the load bias of its ELF addresses, 0 for a fixed executable. */
static int load_bias(pid_t pid, const char *path, bool shared, Elf *elf, uint64_t *bias)
{
	char exe[64], file[4096], real[PATH_MAX];
	struct file_start fs = { real };
	uint64_t min_vaddr = UINT64_MAX;
	GElf_Ehdr eh;
	size_t nph;
	ssize_t n;
	int ret;

	if (!gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph))
		return -EINVAL;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < min_vaddr)
			min_vaddr = ph.p_vaddr & ~0xfffULL;
	}
	if (!realpath(path, real))
		return -errno;
	/*
	 * Until pid has exec'd path, its maps can hold our own mmap of the file
	 * (the decoder's, inherited through fork): wait for /proc/PID/exe.  A
	 * shared object (the service's watch on a library's variable) is
	 * looked up in the maps of a process that did not come from us.
	 */
	if (!shared) {
		snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
		n = readlink(exe, file, sizeof(file) - 1);
		if (n < 0 || (file[n] = 0, strcmp(file, real)))
			return -EAGAIN;
	}
	if (eh.e_type == ET_EXEC && !shared) {
		*bias = 0;
		return 0;
	}
	ret = proc_maps__for_each(pid, file_start_in, &fs);
	if (ret <= 0)
		return ret < 0 ? ret : -EAGAIN;		/* not mapped (yet) */
	*bias = fs.start - min_vaddr;
	return 0;
}

/* A variable (STT_OBJECT) by name, found in a symbol table. */
struct object_query {
	const char *name;
	uint64_t *addr, *size;
};

static int object_named(const struct elf_symbol *s, void *arg)
{
	const struct object_query *q = arg;

	if (GELF_ST_TYPE(s->sym.st_info) != STT_OBJECT || !s->name || strcmp(s->name, q->name))
		return 0;
	*q->addr = s->sym.st_value;
	*q->size = s->sym.st_size;
	return 1;
}

int hwbp__resolve_symbol(pid_t pid, const char *path, bool shared, const char *name,
			uint64_t *addr, uint64_t *size)
{
	struct object_query q = { name, addr, size };
	struct elf_file ef;
	uint64_t bias;
	int err = elf_file__open(path, ELF_C_READ, &ef);

	if (err)
		return err == -ENOEXEC ? -EINVAL : err;
	err = elf_symbols__each(ef.elf, ELF_SYMTAB | ELF_DYNSYM, object_named, &q) > 0 ? 0 :
	      -ENOENT;
	if (!err) {
		err = load_bias(pid, path, shared, ef.elf, &bias);
		*addr += bias;
	}
	elf_file__close(&ef);
	return err;
}

/*
 * A kernel or module variable by name, from kallsyms' data symbols (static
 * ones too, with CONFIG_KALLSYMS_ALL); its size is the distance to the next
 * symbol, kallsyms having no sizes.  A name that several variables share is
 * refused: which one the user meant cannot be told.
 */
int hwbp_resolve_ksym(const char *name, uint64_t *addr, uint64_t *size)
{
	struct ksyms *ks = ksyms__load_data_file("/proc/kallsyms");
	const struct ksym *found = NULL;
	char where[256] = "";
	size_t wlen = 0;
	int n = 0, err;

	if (!ks) {
		err = errno ? -errno : -ENOMEM;
		pr_warn("watch: cannot read /proc/kallsyms: %s\n",
			err == -EPERM ? "addresses are hidden (kptr_restrict)" : strerror(-err));
		return err;
	}
	for (size_t i = 0; i < ksyms__count(ks); i++) {
		const struct ksym *k = ksyms__at(ks, i);

		if (strcmp(k->name, name) || (found && found->addr == k->addr))
			continue;
		if (!n++)
			found = k;
		if (wlen < sizeof(where))
			wlen += snprintf(where + wlen, sizeof(where) - wlen, "%s0x%" PRIx64 " [%s]",
					 n > 1 ? ", " : "", k->addr, k->module ? k->module : "vmlinux");
	}
	if (n == 1) {
		*addr = found->addr;
		*size = found->size;
		err = 0;
	} else if (n > 1) {
		pr_warn("watch: %d kernel variables are named '%s' (%s): give the "
				"ADDRESS of the one to watch\n", n, name, where);
		err = -ENOTUNIQ;
	} else {
		pr_warn("watch: no kernel variable '%s' in /proc/kallsyms (data "
				"symbols need CONFIG_KALLSYMS_ALL)\n", name);
		err = -ENOENT;
	}
	ksyms__free(ks);
	return err;
}

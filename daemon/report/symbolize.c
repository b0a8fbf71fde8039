/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Symbolization of runtime addresses through libdwfl.
 *
 * Each ELF file gets its own offline libdwfl session: one module per
 * session means no two files compete for the addresses libdwfl places
 * ET_DYN objects at, and the session's bias turns a link-time vaddr into
 * the module address libdwfl wants.  Processes are lists of mappings:
 * registered biases first (they survive the process), then /proc/PID/maps.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "symbolize.h"
#include "sites/debuginfo.h"
#include "sites/ehframe.h"
#include "sites/symindex.h"
#include "sites/decode.h"
#include "util/array.h"
#include "util/pid_table.h"
#include "util/proc_maps.h"

#define FILE_BUCKETS	256
#define STR_BUCKETS	256

struct sym_file {
	struct sym_file *next;
	char *path;
	int err;		/* negative errno when the file is unusable */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias;		/* libdwfl module address - link-time vaddr */
	GElf_Phdr *loads;	/* PT_LOAD headers, for file offset <-> vaddr */
	size_t nr_loads;
	uint64_t lo, hi;	/* span of the PT_LOAD vaddrs */
	struct sym_index *names;	/* by-name index, built on the first lookup by name */
	struct sym_memo *memo;		/* answers by address, MEMO_MIN..MEMO_MAX slots */
	size_t memo_cap, memo_used;
	struct fde_range *fdes;		/* .eh_frame's FDEs by start, read on first need */
	size_t nr_fdes, cap_fdes;
	bool fdes_read;
};

/* A function's bounds from its FDE (link-time addresses), for objects without symbols. */
struct fde_range {
	uint64_t start, size;
};

/*
 * A lookup's answer, kept per file.  libdwfl finds the symbol of an address
 * by a scan of the whole symbol table (elfutils 0.188: gelf_getsym per
 * symbol, some 3,000 for libc): a racy program reports the same few
 * addresses hundreds of times a second, and the scans took a core and kept
 * the control socket waiting for seconds.  The strings an answer points to
 * live as long as the file or the symbolizer.
 */
struct sym_memo {
	uint64_t key;		/* vaddr << 1 | is_ra, + 1: 0 is a free slot */
	struct sym_info info;
};

#define MEMO_MIN	64
#define MEMO_MAX	16384	/* slots: about 1 MiB a file; full, it starts over */

/* An object registered at a known bias: covers [start, end) at runtime. */
struct sym_bias {
	uint64_t start, end;
	uint64_t bias;
	struct sym_file *file;
};

struct sym_map {
	uint64_t start, end, pgoff;
	char *path;
	bool exec;		/* mapped executable: code can return here */
};

struct sym_proc {
	struct pid_entry entry;		/* first: the table's entry is the struct */
	struct sym_bias *biases;
	size_t nr_biases, cap_biases;
	struct sym_map *maps;
	size_t nr_maps;
	/* /proc/PID/maps could not be opened: the process is gone, stop asking. */
	bool gone;
};
_Static_assert(offsetof(struct sym_proc, entry) == 0, "a sym_proc is its pid_table entry");

/* Strings made here rather than found in libdw, kept for the symbolizer's lifetime. */
struct sym_str {
	struct sym_str *next;
	char s[];
};

struct symbolizer {
	struct sym_file *files[FILE_BUCKETS];
	struct pid_table procs;		/* of struct sym_proc */
	struct sym_str *strs[STR_BUCKETS];
	uint64_t page_size;
};

struct symbolizer *symbolizer__new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	long ps;

	if (!s)
		return NULL;
	ps = sysconf(_SC_PAGESIZE);
	s->page_size = ps > 0 ? (uint64_t)ps : 4096;
	return s;
}

static void file_free(struct sym_file *f)
{
	free(f->fdes);
	free(f->memo);
	sym_index__free(f->names);
	if (f->dwfl)
		dwfl_end(f->dwfl);
	free(f->loads);
	free(f->path);
	free(f);
}

static void proc_free(struct sym_proc *p)
{
	for (size_t i = 0; i < p->nr_maps; i++)
		free(p->maps[i].path);
	free(p->maps);
	free(p->biases);
	free(p);
}

/* pid_table__each() walks: every process freed, or those that have exited. */
static bool proc_drop(struct pid_entry *e, void *arg)
{
	proc_free((struct sym_proc *)e);
	return true;
}

static bool proc_drop_gone(struct pid_entry *e, void *arg)
{
	return pid__gone(e->pid) && proc_drop(e, arg);
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	for (int i = 0; i < FILE_BUCKETS; i++) {
		while (s->files[i]) {
			struct sym_file *f = s->files[i];

			s->files[i] = f->next;
			file_free(f);
		}
	}
	pid_table__each(&s->procs, proc_drop, NULL);
	for (int i = 0; i < STR_BUCKETS; i++) {
		while (s->strs[i]) {
			struct sym_str *str = s->strs[i];

			s->strs[i] = str->next;
			free(str);
		}
	}
	free(s);
}

static unsigned int hash_mem(const char *p, size_t n)
{
	unsigned int h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*p++) * 16777619u;
	return h;
}

/* The first n bytes of p as a NUL-terminated string owned by s, or NULL. */
static const char *intern(struct symbolizer *s, const char *p, size_t n)
{
	unsigned int b = hash_mem(p, n) % STR_BUCKETS;
	struct sym_str *str;

	for (str = s->strs[b]; str; str = str->next)
		if (!strncmp(str->s, p, n) && !str->s[n])
			return str->s;
	str = malloc(sizeof(*str) + n + 1);
	if (!str)
		return NULL;
	memcpy(str->s, p, n);
	str->s[n] = '\0';
	str->next = s->strs[b];
	s->strs[b] = str;
	return str->s;
}

static int file_load_phdrs(struct sym_file *f)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(f->mod, &bias);
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n) < 0)
		return -ENOEXEC;
	f->bias = bias;
	f->loads = calloc(n ? n : 1, sizeof(*f->loads));
	if (!f->loads)
		return -ENOMEM;
	f->lo = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->loads[f->nr_loads++] = ph;
		if (ph.p_vaddr < f->lo)
			f->lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > f->hi)
			f->hi = ph.p_vaddr + ph.p_memsz;
	}
	if (!f->nr_loads) {
		GElf_Ehdr eh;

		/*
		 * A kernel module (ET_REL) has no segments: it serves lookups by
		 * function name (symbolizer__lookup_func_line) only.
		 */
		if (gelf_getehdr(elf, &eh) && eh.e_type == ET_REL)
			return 0;
		return -ENOEXEC;
	}
	return 0;
}

static int file_open(struct sym_file *f)
{
	int fd;

	/* libdwfl reports its own error codes; open first to return a real errno. */
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);

	f->dwfl = dwfl_begin(debuginfo__offline_callbacks());
	if (!f->dwfl)
		return -ENOMEM;
	dwfl_report_begin(f->dwfl);
	f->mod = dwfl_report_offline(f->dwfl, f->path, f->path, -1);
	if (dwfl_report_end(f->dwfl, NULL, NULL) != 0 || !f->mod)
		return -ENOEXEC;
	return file_load_phdrs(f);
}

/*
 * The file cache entry for path, opened on first use.  Failures are cached
 * too, so that a stack full of frames in an unreadable object costs one
 * open; the entry's path then still names the module.
 */
static struct sym_file *file_get(struct symbolizer *s, const char *path)
{
	unsigned int b = hash_mem(path, strlen(path)) % FILE_BUCKETS;
	struct sym_file *f;

	for (f = s->files[b]; f; f = f->next)
		if (!strcmp(f->path, path))
			return f;

	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	f->err = file_open(f);
	if (f->err && f->dwfl) {
		dwfl_end(f->dwfl);
		f->dwfl = NULL;
		f->mod = NULL;
	}
	f->next = s->files[b];
	s->files[b] = f;
	return f;
}

static void fill_line(struct sym_file *f, Dwarf_Addr addr, struct sym_info *out)
{
	Dwfl_Line *l = dwfl_module_getsrc(f->mod, addr);
	const char *src, *comp;
	int line = 0, col = 0;
	size_t n;

	if (!l)
		return;
	src = dwfl_lineinfo(l, NULL, &line, &col, NULL, NULL);
	if (!src)
		return;
	/*
	 * Reports read better with paths relative to the build tree; pointing
	 * into libdw's string keeps it valid as long as the session.
	 */
	comp = dwfl_line_comp_dir(l);
	if (comp && *comp) {
		n = strlen(comp);
		while (n > 1 && comp[n - 1] == '/')
			n--;
		if (!strncmp(src, comp, n) && src[n] == '/' && src[n + 1])
			src += n + 1;
	}
	out->file = src;
	out->line = line;
	out->column = col;
}

/* The C++ runtime's demangler (libstdc++), as TSan and gdb use it. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/*
 * "_ZN2ns6workerEj" -> "ns::worker": demangled, without the parameter list,
 * so that a C++ frame reads like a C one ("func+0xoff/0xsize") and the
 * title stays short.  NULL when name is not a mangled C++ name.
 */
static const char *demangle(struct symbolizer *s, const char *name)
{
	char *d, *p;
	const char *res;
	int status, depth = 0;

	if (strncmp(name, "_Z", 2))
		return NULL;
	d = __cxa_demangle(name, NULL, NULL, &status);
	if (!d || status)
		return NULL;
	for (p = d; *p; p++) {
		if (!strncmp(p, "operator()", 10)) {
			p += 9;
			continue;
		}
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth)
			depth--;
		else if (*p == '(' && !depth && p != d)
			break;
	}
	res = intern(s, d, p - d);
	free(d);
	return res;
}

static size_t memo_slot(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static const struct sym_info *memo_find(const struct sym_file *f, uint64_t key)
{
	if (!f->memo)
		return NULL;
	for (size_t i = memo_slot(key, f->memo_cap);; i = (i + 1) & (f->memo_cap - 1)) {
		if (f->memo[i].key == key)
			return &f->memo[i].info;
		if (!f->memo[i].key)
			return NULL;
	}
}

/* Keep at most 3/4 of the slots used: grown to MEMO_MAX, then emptied. */
static void memo_add(struct sym_file *f, uint64_t key, const struct sym_info *info)
{
	size_t i;

	if ((f->memo_used + 1) * 4 > f->memo_cap * 3) {
		size_t cap = f->memo_cap ? f->memo_cap * 2 : MEMO_MIN;
		struct sym_memo *old = f->memo, *m;
		size_t old_cap = f->memo_cap;

		if (cap > MEMO_MAX) {
			memset(f->memo, 0, f->memo_cap * sizeof(*f->memo));
			f->memo_used = 0;
		} else {
			m = calloc(cap, sizeof(*m));
			if (!m)
				return;
			f->memo = m;
			f->memo_cap = cap;
			for (size_t j = 0; j < old_cap; j++) {
				if (!old[j].key)
					continue;
				for (i = memo_slot(old[j].key, cap); m[i].key; i = (i + 1) & (cap - 1))
					;
				m[i] = old[j];
			}
			free(old);
		}
	}
	for (i = memo_slot(key, f->memo_cap); f->memo[i].key; i = (i + 1) & (f->memo_cap - 1))
		;
	f->memo[i].key = key;
	f->memo[i].info = *info;
	f->memo_used++;
}

static void file_lookup_slow(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
			     bool is_ra, struct sym_info *out);

static int file_lookup(struct symbolizer *s, struct sym_file *f, uint64_t vaddr, bool is_ra,
		       struct sym_info *out)
{
	uint64_t key = (vaddr << 1 | is_ra) + 1;
	const struct sym_info *known;

	out->module = f->path;
	out->mod_vaddr = vaddr;
	if (f->err)
		return f->err;
	known = memo_find(f, key);
	if (known) {
		*out = *known;
		return 0;
	}
	file_lookup_slow(s, f, vaddr, is_ra, out);
	memo_add(f, key, out);
	return 0;
}

static int fde_add(void *ctx, uint64_t start, uint64_t size)
{
	struct sym_file *f = ctx;

	if (ARRAY_RESERVE(f->fdes, f->cap_fdes, f->nr_fdes, 256))
		return -ENOMEM;
	f->fdes[f->nr_fdes++] = (struct fde_range){ .start = start, .size = size };
	return 0;
}

static int fde_cmp(const void *pa, const void *pb)
{
	const struct fde_range *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* The FDE holding link-time address vaddr, the FDEs read on the first call; or NULL. */
static const struct fde_range *fde_at(struct sym_file *f, uint64_t vaddr)
{
	size_t lo = 0, hi;

	if (!f->fdes_read) {
		GElf_Addr bias;
		Elf *elf = dwfl_module_getelf(f->mod, &bias);

		f->fdes_read = true;
		if (!elf || ehframe__fdes(f->path, elf, fde_add, f))
			f->nr_fdes = 0;
		qsort(f->fdes, f->nr_fdes, sizeof(*f->fdes), fde_cmp);
	}
	hi = f->nr_fdes;
	while (lo < hi) {	/* the first FDE starting past vaddr */
		size_t mid = lo + (hi - lo) / 2;

		if (f->fdes[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && vaddr - f->fdes[lo - 1].start < f->fdes[lo - 1].size)
		return &f->fdes[lo - 1];
	return NULL;
}

/*
 * A function no symbol names (a stripped object): the FDE in .eh_frame
 * that holds the address bounds it, and it is named by its start as
 * target_obj.c names its sites' function (debuginfo__anon_name), so that
 * titles and filters agree.
 */
static void fde_name(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
		     struct sym_info *out)
{
	const struct fde_range *fde = fde_at(f, vaddr);
	char name[4096];

	if (!fde)
		return;
	debuginfo__anon_name(f->path, fde->start, name, sizeof(name));
	out->func = intern(s, name, strlen(name));
	out->off = vaddr - fde->start;
	out->size = fde->size;
}

static void file_lookup_slow(struct symbolizer *s, struct sym_file *f, uint64_t vaddr,
			     bool is_ra, struct sym_info *out)
{
	GElf_Addr addr = vaddr + f->bias;
	const char *name;
	GElf_Off off = 0;
	GElf_Sym sym;

	name = dwfl_module_addrinfo(f->mod, addr, &off, &sym, NULL, NULL, NULL);
	if (!name)
		fde_name(s, f, vaddr, out);
	else {
		const char *plain = demangle(s, name);

		/*
		 * A .symtab keeps symbol versions in the name ("fopen@@GLIBC_2.2.5");
		 * the kernel-style report wants the bare function name.
		 */
		const char *at = strchr(name, '@');

		if (plain) {
			name = plain;
		} else if (at && at > name) {
			const char *trimmed = intern(s, name, at - name);

			if (trimmed)
				name = trimmed;
		}
		out->func = name;
		out->off = off;
		out->size = sym.st_size;
	}
	/* A return address points past the call, possibly at the next line's code. */
	if (is_ra && addr > 0)
		addr--;
	fill_line(f, addr, out);
}

int symbolizer__lookup_func_line(struct symbolizer *s, const char *path, const char *func,
				 uint64_t off, bool is_ra, struct sym_info *out)
{
	struct sym_file *f = file_get(s, path);
	uint64_t addr;

	memset(out, 0, sizeof(*out));
	if (!f)
		return -ENOMEM;
	if (f->err)
		return f->err;
	/* Every kernel frame of every report comes here: index the names once per file. */
	if (!f->names) {
		f->names = sym_index__build(f->mod);
		if (!f->names)
			return -ENOMEM;
	}
	if (sym_index__find(f->names, func, true, false, &addr, NULL))
		return -ENOENT;
	addr += off;
	/* A return address points past the call, possibly at the next line's code. */
	if (is_ra && addr > 0)
		addr--;
	out->func = func;
	fill_line(f, addr, out);
	return 0;
}

int symbolizer__lookup_file(struct symbolizer *s, const char *path, uint64_t vaddr, bool is_ra,
			    struct sym_info *out)
{
	struct sym_file *f;

	memset(out, 0, sizeof(*out));
	if (!s || !path)
		return -EINVAL;
	f = file_get(s, path);
	if (!f)
		return -ENOMEM;
	return file_lookup(s, f, vaddr, is_ra, out);
}

static struct sym_proc *proc_get(struct symbolizer *s, pid_t pid, bool create)
{
	if (!create)
		return (struct sym_proc *)pid_table__find(&s->procs, pid);
	return (struct sym_proc *)pid_table__get(&s->procs, pid, sizeof(struct sym_proc));
}

int symbolizer__proc_add_bias(struct symbolizer *s, pid_t pid, const char *path, uint64_t bias)
{
	struct sym_proc *p;
	struct sym_file *f;
	struct sym_bias *b;

	if (!s || !path)
		return -EINVAL;
	f = file_get(s, path);
	if (!f)
		return -ENOMEM;
	if (f->err)
		return f->err;
	p = proc_get(s, pid, true);
	if (!p)
		return -ENOMEM;

	for (size_t i = 0; i < p->nr_biases; i++)
		if (p->biases[i].file == f && p->biases[i].bias == bias)
			return 0;
	if (ARRAY_RESERVE(p->biases, p->cap_biases, p->nr_biases, 8))
		return -ENOMEM;
	b = &p->biases[p->nr_biases++];
	b->start = f->lo + bias;
	b->end = f->hi + bias;
	b->bias = bias;
	b->file = f;
	return 0;
}

/* The file mappings of a process, as proc_read_maps collects them. */
struct maps_read {
	struct sym_map *v;
	size_t n, cap;
};

static int maps_add(const struct proc_map *pm, void *arg)
{
	struct maps_read *r = arg;
	struct sym_map *m;

	/* Anonymous memory, [heap], [vdso] and the like have no file to read. */
	if (!proc_map__file(pm))
		return 0;
	if (ARRAY_RESERVE(r->v, r->cap, r->n, 64))
		return -ENOMEM;
	m = &r->v[r->n];
	m->path = strdup(pm->path);
	if (!m->path)
		return -ENOMEM;
	m->start = pm->start;
	m->end = pm->end;
	m->pgoff = pm->pgoff;
	m->exec = proc_map__exec(pm);
	r->n++;
	return 0;
}

static int proc_read_maps(struct sym_proc *p)
{
	struct maps_read r = { 0 };
	int err = proc_maps__for_each(p->entry.pid, maps_add, &r);

	if (err) {
		for (size_t i = 0; i < r.n; i++)
			free(r.v[i].path);
		free(r.v);
		return err;
	}
	for (size_t i = 0; i < p->nr_maps; i++)
		free(p->maps[i].path);
	free(p->maps);
	p->maps = r.v;
	p->nr_maps = r.n;
	return 0;
}

/* The kernel lists mappings in address order, so a binary search does. */
static struct sym_map *proc_find_map(struct sym_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct sym_map *m = &p->maps[mid];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

/*
 * Link-time vaddr of addr in mapping m of file f.  The mapping shows file
 * offset pgoff at start.  Segments may share a file page, so the one meant
 * is the segment whose file pages the mapping starts in and whose memory
 * image holds the result; the image test also admits bss past p_filesz.
 */
static int map_to_vaddr(struct symbolizer *s, struct sym_file *f, struct sym_map *m,
			uint64_t addr, uint64_t *vaddr)
{
	uint64_t off = addr - m->start + m->pgoff;

	for (size_t i = 0; i < f->nr_loads; i++) {
		GElf_Phdr *ph = &f->loads[i];
		uint64_t file_lo = ph->p_offset & ~(s->page_size - 1);
		uint64_t v = off - ph->p_offset + ph->p_vaddr;

		if (m->pgoff < file_lo || m->pgoff >= ph->p_offset + ph->p_filesz)
			continue;
		if (v < ph->p_vaddr || v - ph->p_vaddr >= ph->p_memsz)
			continue;
		*vaddr = v;
		return 0;
	}
	return -ENOENT;
}

int symbolizer__proc_lookup(struct symbolizer *s, pid_t pid, uint64_t addr, bool is_ra,
			    struct sym_info *out)
{
	struct sym_proc *p;
	struct sym_map *m;
	struct sym_file *f;
	uint64_t vaddr;
	int err;

	memset(out, 0, sizeof(*out));
	if (!s)
		return -EINVAL;
	p = proc_get(s, pid, true);
	if (!p)
		return -ENOMEM;

	/* Newest first: a later registration describes the current image. */
	for (size_t i = p->nr_biases; i-- > 0;) {
		struct sym_bias *b = &p->biases[i];

		if (addr >= b->start && addr < b->end)
			return file_lookup(s, b->file, addr - b->bias, is_ra, out);
	}

	m = proc_find_map(p, addr);
	if (!m && !p->gone) {
		/* Not seen yet, or mapped since the last read (dlopen). */
		err = proc_read_maps(p);
		if (err == -ENOENT || err == -ESRCH)
			p->gone = true;
		else if (err)
			return err;
		m = proc_find_map(p, addr);
	}
	if (!m)
		return 0;

	f = file_get(s, m->path);
	if (!f)
		return -ENOMEM;
	out->module = f->path;
	if (f->err)
		return f->err;
	if (map_to_vaddr(s, f, m, addr, &vaddr))
		return 0;
	return file_lookup(s, f, vaddr, is_ra, out);
}

/* Does a call instruction of f end right before link-time address vaddr, in code? */
static bool file_call_before(struct sym_file *f, uint64_t vaddr)
{
	GElf_Addr bias;
	Elf *elf = f->mod ? dwfl_module_getelf(f->mod, &bias) : NULL;
	size_t size = 0;
	const uint8_t *raw = elf ? (const uint8_t *)elf_rawfile(elf, &size) : NULL;

	if (!raw)
		return false;
	for (size_t i = 0; i < f->nr_loads; i++) {
		const GElf_Phdr *ph = &f->loads[i];
		uint64_t off;

		if (!(ph->p_flags & PF_X) || vaddr <= ph->p_vaddr ||
		    vaddr > ph->p_vaddr + ph->p_filesz)
			continue;
		off = ph->p_offset + (vaddr - ph->p_vaddr);
		if (off > size)
			return false;
		return decode__call_before(raw + off, vaddr - ph->p_vaddr);
	}
	return false;
}

int symbolizer__proc_after_call(struct symbolizer *s, pid_t pid, uint64_t ra)
{
	struct sym_proc *p = s ? proc_get(s, pid, true) : NULL;
	struct sym_file *f;
	struct sym_map *m;
	uint64_t vaddr;

	if (!p)
		return -ENOMEM;
	for (size_t i = p->nr_biases; i-- > 0;) {
		struct sym_bias *b = &p->biases[i];

		if (ra > b->start && ra <= b->end)
			return file_call_before(b->file, ra - b->bias);
	}
	m = proc_find_map(p, ra - 1);
	if (!m && !p->gone) {
		int err = proc_read_maps(p);

		if (err == -ENOENT || err == -ESRCH)
			p->gone = true;
		else if (err)
			return err;
		m = proc_find_map(p, ra - 1);
	}
	if (!m)
		return p->gone ? -ENOENT : 0;
	if (!m->exec)
		return 0;
	f = file_get(s, m->path);
	if (!f)
		return -ENOMEM;
	if (f->err)
		return f->err;
	if (map_to_vaddr(s, f, m, ra - 1, &vaddr))
		return 0;
	return file_call_before(f, vaddr + 1);
}

void symbolizer__proc_forget(struct symbolizer *s, pid_t pid)
{
	struct sym_proc *p = s ? (struct sym_proc *)pid_table__take(&s->procs, pid) : NULL;

	if (p)
		proc_free(p);
}

size_t symbolizer__forget_exited(struct symbolizer *s)
{
	return s ? pid_table__each(&s->procs, proc_drop_gone, NULL) : 0;
}

/* Append like snprintf, keeping the running total even once buf is full. */
static int append(char *buf, size_t len, int used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int append(char *buf, size_t len, int used, const char *fmt, ...)
{
	size_t at = (size_t)used < len ? (size_t)used : len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(at < len ? buf + at : NULL, len - at, fmt, ap);
	va_end(ap);
	return n < 0 ? n : used + n;
}

int sym_info__format(const struct sym_info *si, uint64_t addr, bool with_line, char *buf,
		     size_t len)
{
	int n;

	if (si && si->func) {
		n = append(buf, len, 0, "%s+0x%" PRIx64 "/0x%" PRIx64, si->func, si->off,
			   si->size);
	} else if (si && si->module) {
		const char *base = strrchr(si->module, '/');

		n = append(buf, len, 0, "0x%" PRIx64 " (%s+0x%" PRIx64 ")", addr,
			   base ? base + 1 : si->module, si->mod_vaddr);
	} else {
		n = append(buf, len, 0, "0x%" PRIx64, addr);
	}
	if (n >= 0 && with_line && si && si->file && si->line > 0)
		n = append(buf, len, n, " %s:%d", si->file, si->line);
	return n;
}

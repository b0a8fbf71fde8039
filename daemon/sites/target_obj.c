/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ELF objects for decoding: the functions of an executable or shared
 * object (libelf), the code decode__function() reads, and the PT_LOAD
 * mapping from a site's virtual address to the file offset a uprobe takes.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <signal.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "debuginfo.h"
#include "decode.h"
#include "ehframe.h"
#include "elf_symbols.h"
#include "plt.h"
#include "util/print.h"
#include "util/array.h"

/* ------------------------------------------------------------------------ */
/* ELF objects                                                              */
/* ------------------------------------------------------------------------ */

struct load_seg {
	uint64_t vaddr, off, filesz;
	bool exec;
};

struct obj_priv {
	int fd;
	struct stat st;		/* the file as decoded: probes go on this one only */
	bool lease;		/* a read lease: a writer's open() waits for us */
	bool reported;		/* the change was reported */
	Elf *elf;
	struct load_seg *segs;
	size_t nr_segs;
	size_t *func_scn;	/* section index of each funcs[] entry */
	struct plt_map plt;	/* what its PLT stubs call, for decode_opts::call_name */
};

/* A symbol candidate before aliases at the same address are merged. */
struct func_cand {
	const char *name;	/* NULL: an FDE that no symbol names */
	uint64_t vaddr, size;
	size_t scn;
	int rank;		/* binding preference: lower wins; 3 an FDE with no name */
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
	if (!a->name || !b->name)	/* unnamed FDEs */
		return !a->name - !b->name;
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
		pr_warn("%s: cannot read program headers: %s\n", obj->path,
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

/* The code section holding [vaddr, vaddr + size) in the file decoded: its bytes are read there. */
static bool code_scn_at(Elf *elf, uint64_t vaddr, uint64_t size, size_t *idx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!scn_is_code(elf, elf_ndxscn(scn), &sh))
			continue;
		if (vaddr < sh.sh_addr || size > sh.sh_size || vaddr - sh.sh_addr > sh.sh_size - size)
			continue;
		*idx = elf_ndxscn(scn);
		return true;
	}
	return false;
}

/*
 * A symbol of the file decoded or of its separate debug file as a
 * candidate function: false unless it is one, whole in a code section of
 * code_elf, the file decoded.  A debug file's sections hold no code.
 */
static bool symbol_cand(Elf *code_elf, const struct elf_symbol *s, struct func_cand *out)
{
	const GElf_Sym *sym = &s->sym;
	size_t shndx = s->shndx;

	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC || !sym->st_size)
		return false;
	if (shndx == SHN_UNDEF || (shndx >= SHN_LORESERVE && sym->st_shndx != SHN_XINDEX))
		return false;
	if (!code_scn_at(code_elf, sym->st_value, sym->st_size, &shndx))
		return false;
	if (!s->name || !*s->name)
		return false;
	*out = (struct func_cand){
		.name = s->name, .vaddr = sym->st_value, .size = sym->st_size, .scn = shndx,
		.rank = bind_rank(GELF_ST_BIND(sym->st_info)),
	};
	return true;
}

/* The sorted candidates into obj->funcs, one per address; unnamed ones named by address. */
static int keep_funcs(struct target_obj *obj, struct obj_priv *p, const struct func_cand *cand,
		      size_t ncand)
{
	size_t nout = 0;
	char anon[PATH_MAX + 32];
	int err = 0;

	obj->funcs = calloc(ncand ? ncand : 1, sizeof(*obj->funcs));
	p->func_scn = calloc(ncand ? ncand : 1, sizeof(*p->func_scn));
	if (!obj->funcs || !p->func_scn) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ncand; i++) {
		const char *name = cand[i].name;

		/* Sorted best alias first: keep one entry per address. */
		if (nout && obj->funcs[nout - 1].vaddr == cand[i].vaddr)
			continue;
		if (!name) {
			debuginfo__anon_name(obj->path, cand[i].vaddr, anon, sizeof(anon));
			name = anon;
		}
		obj->funcs[nout].name = strdup(name);
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
	return err;
}

/* Candidates growing as they are found. */
struct cand_vec {
	struct func_cand *v;
	size_t n, cap;
};

/* A slot for one more candidate (counted once cv->n is incremented), or NULL. */
static struct func_cand *cand_push(struct cand_vec *cv)
{
	if (ARRAY_RESERVE(cv->v, cv->cap, cv->n, 256))
		return NULL;
	return &cv->v[cv->n];
}

struct cands_walk {
	Elf *code_elf;
	struct cand_vec *cv;
};

static int add_cand(const struct elf_symbol *s, void *arg)
{
	struct cands_walk *w = arg;
	struct func_cand *c = cand_push(w->cv);

	if (!c)
		return -ENOMEM;
	w->cv->n += symbol_cand(w->code_elf, s, c);
	return 0;
}

/* The functions of symelf's symbol table of these kinds (ELF_SYMTAB, ELF_DYNSYM) into cv. */
static int symtab_cands(const char *path, Elf *symelf, Elf *code_elf, enum elf_symtabs tables,
			struct cand_vec *cv)
{
	struct cands_walk w = { code_elf, cv };
	int err = elf_symbols__each(symelf, tables, add_cand, &w);

	if (err == -ENOEXEC)
		pr_warn("%s: cannot read symbol table: %s\n", path, elf_errmsg(-1));
	return err == -ENOENT ? 0 : err;
}

/* Does [vaddr, end) overlap a function of the sorted v[0..n)? */
static bool cand_overlaps(const struct func_cand *v, size_t n, uint64_t vaddr, uint64_t end)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {	/* the first candidate starting at or past end */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].vaddr < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Named functions do not nest: the last one starting before end is the one to check. */
	return lo && v[lo - 1].vaddr + v[lo - 1].size > vaddr;
}

/* What cfi_cand needs: the file decoded, the named functions, where the FDEs go. */
struct cfi_walk {
	Elf *elf;
	size_t shstrndx;
	size_t named;		/* cv->v[0..named): the named functions, sorted */
	struct cand_vec *cv;
};

/*
 * One FDE as an unnamed function, unless a named one covers it or it lies
 * in no code section, or in the PLT, whose stubs only jump through the GOT.
 */
static int cfi_cand(void *ctx, uint64_t start, uint64_t size)
{
	struct cfi_walk *w = ctx;
	struct func_cand *c;
	const char *name;
	GElf_Shdr sh;
	size_t scn;

	if (!code_scn_at(w->elf, start, size, &scn) || !scn_is_code(w->elf, scn, &sh))
		return 0;
	name = elf_strptr(w->elf, w->shstrndx, sh.sh_name);
	if ((name && !strncmp(name, ".plt", 4)) ||
	    cand_overlaps(w->cv->v, w->named, start, start + size))
		return 0;
	c = cand_push(w->cv);
	if (!c)
		return -ENOMEM;
	*c = (struct func_cand){ .vaddr = start, .size = size, .scn = scn, .rank = 3 };
	w->cv->n++;
	return 0;
}

/* The FDEs of .eh_frame that no named function of cv covers, as unnamed functions. */
static int cfi_cands(const char *path, Elf *elf, struct cand_vec *cv)
{
	struct cfi_walk w = { .elf = elf, .named = cv->n, .cv = cv };

	if (elf_getshdrstrndx(elf, &w.shstrndx)) {
		pr_warn("%s: cannot read section names: %s\n", path, elf_errmsg(-1));
		return -ENOEXEC;
	}
	qsort(cv->v, cv->n, sizeof(*cv->v), cand_cmp);
	return ehframe__fdes(path, elf, cfi_cand, &w);
}

/* The separate debug file libdwfl finds for path, as a malloc'd path, or NULL. */
static char *find_debug_file(const char *path)
{
	Dwfl *dwfl = dwfl_begin(debuginfo__offline_callbacks());
	const char *debugfile = NULL;
	Dwfl_Module *mod;
	char *res = NULL;

	if (!dwfl)
		return NULL;
	dwfl_report_begin(dwfl);
	mod = dwfl_report_offline(dwfl, path, path, -1);
	if (!dwfl_report_end(dwfl, NULL, NULL) && mod) {
		/* With no .symtab of its own, libdwfl looks for the debug file's. */
		dwfl_module_getsymtab(mod);
		dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
		if (debugfile)
			res = strdup(debugfile);
	}
	dwfl_end(dwfl);
	return res;
}

/*
 * The functions of the symbol table of path's separate debug file, if it
 * has one, opened as *ef.  Their names are its strings: the caller closes
 * it once the functions are kept (libelf frees them with the file).
 */
static int debug_file_cands(struct target_obj *obj, struct obj_priv *p, struct cand_vec *cv,
			    struct elf_file *ef)
{
	char *debug = find_debug_file(obj->path);
	int err = 0;

	if (!debug)
		return 0;
	if (!elf_file__open(debug, ELF_C_READ, ef))
		err = symtab_cands(debug, ef->elf, p->elf, ELF_SYMTAB, cv);
	if (!err && cv->n)
		snprintf(obj->funcs_from, sizeof(obj->funcs_from), "debug file %s", debug);
	free(debug);
	return err;
}

/*
 * The functions, from the first source that has them: the file's own
 * .symtab, its separate debug file's, else .dynsym's names with the FDEs
 * of .eh_frame bounding the functions no symbol names (a stripped file).
 */
static int load_funcs(struct target_obj *obj, struct obj_priv *p)
{
	struct elf_file debug = { .fd = -1 };
	struct cand_vec cv = { 0 };
	int err;

	err = symtab_cands(obj->path, p->elf, p->elf, ELF_SYMTAB, &cv);
	if (!err && cv.n)
		snprintf(obj->funcs_from, sizeof(obj->funcs_from), "symtab");
	if (!err && !cv.n)
		err = debug_file_cands(obj, p, &cv, &debug);
	if (!err && !cv.n) {
		err = symtab_cands(obj->path, p->elf, p->elf, ELF_DYNSYM, &cv);
		if (!err)
			err = cfi_cands(obj->path, p->elf, &cv);
		snprintf(obj->funcs_from, sizeof(obj->funcs_from), "dynsym and eh_frame");
	}
	if (!err) {
		qsort(cv.v, cv.n, sizeof(*cv.v), cand_cmp);
		err = keep_funcs(obj, p, cv.v, cv.n);
	}
	free(cv.v);
	elf_file__close(&debug);
	return err;
}

/*
 * Opens path for decoding; the descriptor stays open for as long as the
 * object is probed, and every probe goes on the file it names
 * (target_obj__attach_path), never on whatever the path names later.
 * O_NONBLOCK: a FIFO or a device must not block the caller (the service
 * runs one poll loop); only a regular file is accepted.
 */
static int open_regular(const char *path, struct obj_priv *p)
{
	int err;

	p->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (p->fd < 0) {
		err = -errno;
		pr_warn("cannot open %s: %s\n", path, strerror(errno));
		return err;
	}
	if (fstat(p->fd, &p->st)) {
		err = -errno;
		pr_warn("cannot stat %s: %s\n", path, strerror(errno));
		return err;
	}
	if (!S_ISREG(p->st.st_mode)) {
		pr_warn("%s: not a regular file\n", path);
		return -EINVAL;
	}
	/*
	 * A read lease makes an in-place rewrite (cp over the file) wait in its
	 * open() until target_obj__changed() has seen it and the engine has
	 * removed the probes, so no new process of the rewritten file gets int3
	 * bytes at stale offsets.  The break is signalled with SIGURG, whose
	 * default action is to ignore it, instead of SIGIO, which would kill us.
	 * Best effort: a file someone has open for writing gets no lease, and
	 * the size and mtime check still applies.
	 */
	if (!fcntl(p->fd, F_SETSIG, SIGURG) && !fcntl(p->fd, F_SETLEASE, F_RDLCK))
		p->lease = true;
	return 0;
}

/* The ELF of p->fd, an x86-64 executable or shared object: 0, or -ENOEXEC. */
static int begin_elf(struct target_obj *obj, struct obj_priv *p)
{
	GElf_Ehdr eh;

	/*
	 * read(), not mmap: the kernel installs existing uprobes into every
	 * mapping of the file that may execute, a read-only one included, so
	 * an mmapped copy of an already probed object shows int3 bytes.
	 */
	p->elf = elf_begin(p->fd, ELF_C_READ, NULL);
	if (!p->elf || elf_kind(p->elf) != ELF_K_ELF) {
		pr_warn("%s: not an ELF file\n", obj->path);
		return -ENOEXEC;
	}
	if (gelf_getclass(p->elf) != ELFCLASS64 || !gelf_getehdr(p->elf, &eh) ||
	    eh.e_machine != EM_X86_64) {
		pr_warn("%s: not an x86-64 ELF object\n", obj->path);
		return -ENOEXEC;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		pr_warn("%s: not an x86-64 ELF object (%s)\n", obj->path,
			"neither executable nor shared object");
		return -ENOEXEC;
	}
	obj->pie = eh.e_type == ET_DYN;
	return 0;
}

int target_obj__open(const char *path, struct target_obj **out)
{
	struct target_obj *obj;
	struct obj_priv *p;
	int err;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		pr_warn("libelf: %s\n", elf_errmsg(-1));
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

	err = open_regular(path, p);
	if (err)
		goto err;
	err = begin_elf(obj, p);
	if (err)
		goto err;
	err = load_segments(obj, p);
	if (err)
		goto err;
	err = load_funcs(obj, p);
	if (!err)
		err = plt_map__load(p->elf, &p->plt);
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

/* Function i's code, or NULL if its section cannot be read. */
static const uint8_t *func_code(const struct target_obj *obj, size_t i)
{
	const struct obj_priv *p = obj->priv;
	const struct elf_func *f = &obj->funcs[i];
	Elf_Scn *scn = elf_getscn(p->elf, p->func_scn[i]);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	GElf_Shdr sh;

	if (!data || !gelf_getshdr(scn, &sh) || !data->d_buf ||
	    f->vaddr - sh.sh_addr + f->size > data->d_size)
		return NULL;
	return (const uint8_t *)data->d_buf + (f->vaddr - sh.sh_addr);
}

struct entry_locked {
	struct target_obj *obj;
	struct site **v;	/* the locked sites that start their function */
	size_t n, cap;
};

/* A direct call or jump to a locked site that starts its function: a probe ahead of it there. */
static void entry_branch(void *arg, uint64_t from, uint64_t to)
{
	struct entry_locked *el = arg;
	uint64_t off;

	for (size_t i = 0; i < el->n; i++) {
		struct site *s = el->v[i];

		if (s->vaddr != to || s->nr_ahead == SITE_AHEAD_MAX ||
		    target_obj__vaddr_to_off(el->obj, from, &off) ||
		    s->file_off - off != s->vaddr - from)
			continue;
		s->ahead[s->nr_ahead++] = (int32_t)(s->vaddr - from);
	}
}

/*
 * A locked site that starts its function has no instruction of its own
 * function before it (decode.c, locked_ahead): its probes ahead go on the
 * object's direct calls and jumps to it, where its address registers hold
 * what it will use, rsp aside (so not on an rsp-based one).  Calls through
 * the PLT or a pointer still publish its release late (counted so).
 */
static void entry_locked_aheads(struct target_obj *obj)
{
	struct entry_locked el = { .obj = obj };

	for (size_t i = 0; i < obj->sites.n; i++) {
		struct site *s = &obj->sites.v[i];

		if (!s->desc.probe_delta || s->vaddr != obj->funcs[s->func].vaddr ||
		    s->desc.base == KCSAND_REG_RSP || s->desc.index == KCSAND_REG_RSP)
			continue;
		if (ARRAY_RESERVE(el.v, el.cap, el.n, 8))
			break;
		el.v[el.n++] = s;
	}
	for (size_t i = 0; el.n && i < obj->nr_funcs; i++) {
		const uint8_t *code = func_code(obj, i);

		if (code)
			decode__direct_branches(code, obj->funcs[i].size, obj->funcs[i].vaddr,
						entry_branch, &el);
	}
	free(el.v);
}

/* decode_opts::call_name: a PLT stub's function, or the object's own starting at target. */
static const char *obj_call_name(const void *ctx, uint64_t target)
{
	const struct target_obj *obj = ctx;
	const struct obj_priv *p = obj->priv;
	const char *name = plt_map__name(&p->plt, target);
	const struct elf_func *f;

	if (name)
		return name;
	f = target_obj__func_at(obj, target);
	return f && f->vaddr == target ? f->name : NULL;
}

int target_obj__decode(struct target_obj *obj, const char *globs, const struct decode_opts *opts)
{
	struct decode_opts o = opts ? *opts : (struct decode_opts){ 0 };
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
		const uint8_t *code;
		size_t start = obj->sites.n;

		if (!name_matches(f->name, pats, npat))
			continue;
		matched++;

		code = func_code(obj, i);
		if (!code) {
			pr_warn("%s: %s: cannot read code: %s\n", obj->path,
				f->name, elf_errmsg(-1));
			err = -EIO;
			break;
		}
		o.call_name = obj_call_name;
		o.call_ctx = obj;
		err = decode__function(code, f->size, f->vaddr, (uint32_t)i, &o, &obj->sites,
				       &obj->stats);

		for (size_t j = start; j < obj->sites.n && !err; j++) {
			struct site *s = &obj->sites.v[j];

			if (target_obj__vaddr_to_off(obj, s->vaddr, &s->file_off)) {
				pr_warn("%s: %s: 0x%" PRIx64 ": %s\n", obj->path,
					f->name, s->vaddr, "in no loadable segment");
				err = -ERANGE;
			}
		}
	}
	free(pats);
	if (!err && opts && opts->entry_aheads)
		entry_locked_aheads(obj);
	return err ? err : matched;
}

const struct elf_func *target_obj__func_at(const struct target_obj *obj, uint64_t vaddr)
{
	/* The last function starting at or below vaddr. */
	size_t lo = ARRAY_COUNT_LE(obj->funcs, obj->nr_funcs, vaddr, vaddr);

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
		plt_map__free(&p->plt);
		free(p);
	}
	for (size_t i = 0; i < obj->nr_funcs; i++)
		free(obj->funcs[i].name);
	free(obj->funcs);
	site_vec__free(&obj->sites);
	free(obj->path);
	free(obj);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

static bool same_content(const struct stat *a, const struct stat *b)
{
	return same_file(a, b) && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

int target_obj__changed(struct target_obj *obj)
{
	struct obj_priv *p = obj->priv;
	const char *why = NULL;
	struct stat now;

	if (!p || p->fd < 0)
		return 0;	/* kernel objects: no file */
	if (p->lease && fcntl(p->fd, F_GETLEASE) != F_RDLCK)
		why = "is being rewritten";
	else if (fstat(p->fd, &now) || !same_content(&now, &p->st))
		why = "was rewritten";
	else if (stat(obj->path, &now) || !same_file(&now, &p->st))
		why = "was replaced or removed";
	if (!why)
		return 0;
	if (!p->reported)
		pr_warn("%s %s since it was decoded: its probes are removed (add it again to "
			"probe the new file)\n", obj->path, why);
	p->reported = true;
	return 1;
}

void target_obj__release(struct target_obj *obj)
{
	struct obj_priv *p = obj->priv;

	/* The probes are gone: let a writer waiting on the lease go on. */
	if (p && p->lease) {
		fcntl(p->fd, F_SETLEASE, F_UNLCK);
		p->lease = false;
	}
}

int target_obj__attach_path(struct target_obj *obj, char *buf, size_t len)
{
	const struct obj_priv *p = obj->priv;

	if (!p || p->fd < 0) {
		snprintf(buf, len, "%s", obj->path);
		return 0;
	}
	if (target_obj__changed(obj))
		return -ESTALE;
	snprintf(buf, len, "/proc/self/fd/%d", p->fd);
	return 0;
}

int target_obj__file_id(const struct target_obj *obj, dev_t *dev, ino_t *ino)
{
	const struct obj_priv *p = obj->priv;

	if (!p || p->fd < 0)
		return -ENOENT;
	*dev = p->st.st_dev;
	*ino = p->st.st_ino;
	return 0;
}

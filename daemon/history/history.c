// SPDX-License-Identifier: GPL-2.0-only
/*
 * The history detector's probes: for each process it is given, the sync
 * functions of the libraries its executable needs and the executable's
 * OpenMP outlined functions, each probed for that process only (a uprobe
 * with a pid is installed in that process's memory, across its exec, and
 * not in every process that maps libc).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "history.h"
#include "history_int.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/link_close.h"
#include "util/proc_maps.h"
#include "util/uprobe_multi.h"
#include "sites/decode.h"
#include "sites/elf_symbols.h"
#include "sites/omp_spawn.h"
#include "kcsand.skel.h"
#include "util/print.h"

#define HB_MAX_LIBS	64

/*
 * One uprobe_multi link of sync probes, kept so that it can be taken off
 * and put back (history__pause): the file it probes stays open, and it is
 * attached again through that descriptor, so a file replaced meanwhile is
 * never probed at offsets decoded from the old one.
 */
struct hb_group {
	int file_fd;
	int link_fd;			/* -1 while paused */
	pid_t pid;
	__u32 flags;			/* KCSAND_UPROBE_MULTI_RETURN */
	int prog_fd;
	size_t n;
	__u64 *off, *cookie;
};

/* A file whose sync functions are probed for a process: each is probed once per process. */
struct hb_probed {
	pid_t pid;
	dev_t dev;
	ino_t ino;
};

struct history {
	struct kcsand_bpf *skel;
	bool multi;			/* uprobe_multi links (Linux 6.6+) */
	struct hb_group *groups;
	size_t nr_groups, cap_groups;
	bool paused;
	unsigned long pauses;		/* times the sync probes were taken off */
	unsigned long lost;		/* groups that could not be put back (their process ended) */
	struct bpf_link **links;	/* tracepoints, and per-probe links without uprobe_multi */
	size_t nr_links, cap_links;
	unsigned long functions, outlined, probes;
	unsigned long outlined_spawned;	/* of them, found by the calls that run them */
	char libs[256];			/* the probed libraries' names, for -v */
	struct hb_probed *probed;
	size_t nr_probed, cap_probed;
	__u64 held_seen;		/* hb_held when the held processes were last taken over */
	unsigned long taken_over;	/* processes held and then let go (history__poll) */
	uint64_t held_ns, held_max_ns;	/* how long they were held: in all, the longest */
	unsigned long held_timed;	/* of them, those whose hold time was known */
};

static int add_link(struct history *hist, struct bpf_link *l);

void history__before_load(struct kcsand_bpf *skel, bool multi)
{
	if (!multi)
		return;
	bpf_program__set_expected_attach_type(skel->progs.kcsand_hb_entry,
					      KCSAND_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(skel->progs.kcsand_hb_return,
					      KCSAND_BPF_TRACE_UPROBE_MULTI);
}

/* Thread creation and exit: the clocks a new thread starts with and a join ends with. */
int history__new(struct kcsand_bpf *skel, bool multi, struct history **out)
{
	struct history *hist = calloc(1, sizeof(*hist));
#define TP_PROG(prog, tp) skel->progs.prog,
#define TP_NAME(prog, tp) #tp,
	struct bpf_program *progs[] = { HISTORY_TRACEPOINTS(TP_PROG) };
	static const char *const names[] = { HISTORY_TRACEPOINTS(TP_NAME) };
#undef TP_PROG
#undef TP_NAME
	int err = 0;

	if (!hist)
		return -ENOMEM;
	hist->skel = skel;
	hist->multi = multi;
	/* On from the start: under trace_all, BPF finds the processes (history__poll). */
	skel->bss->hb_daemon_tgid = getpid();
	skel->bss->hb_enabled = 1;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]) && !err; i++) {
		struct bpf_link *l = bpf_program__attach(progs[i]);

		err = l ? add_link(hist, l) : -errno;
		if (!l)
			pr_warn("history: cannot attach the %s tracepoint: %s\n",
				names[i], strerror(-err));
	}
	if (err) {
		history__free(hist);
		return err;
	}
	*out = hist;
	return 0;
}

static int add_link(struct history *hist, struct bpf_link *l)
{
	if (ARRAY_RESERVE(hist->links, hist->cap_links, hist->nr_links, 64))
		return -ENOMEM;
	hist->links[hist->nr_links++] = l;
	return 0;
}

/*
 * The probes of one object, in three groups: function entries, function
 * returns, and the ret instructions of a lock function whose entry
 * uprobes refuse (glibc's pthread_spin_lock starts with `lock decl
 * (%rdi)`; a uretprobe is set at the entry too): there eax is the result
 * and rdi, in these few-instruction functions, still the lock.
 */
enum { HB_GROUP_ENTRY, HB_GROUP_RETURN, HB_GROUP_RET_INSN, HB_GROUPS };
#define HB_MAX_PROBES	512

struct batch {
	__u64 off[HB_GROUPS][HB_MAX_PROBES];
	__u64 cookie[HB_GROUPS][HB_MAX_PROBES];
	size_t n[HB_GROUPS];
};

/* cookie: the operation, and in the upper half what the probe needs besides (above). */
static void batch_add(struct batch *b, int g, uint64_t off, uint64_t cookie)
{
	if (b->n[g] < HB_MAX_PROBES) {
		b->off[g][b->n[g]] = off;
		b->cookie[g][b->n[g]++] = cookie;
	}
}

/*
 * Decode the function's code: is its first instruction locked, and where
 * are its rets?  past_lock (may be NULL): a locked first instruction's
 * length when the next one can take a probe (is not locked too), else 0.
 * That is where an outlined function that starts with a locked instruction
 * (its body begins with an `omp atomic`) gets its entry and return probes:
 * the locked instruction writes memory, not rsp, so the return address is
 * still at the stack's top for the uretprobe, and not the argument
 * registers an outlined function reads (rdi, its data).  Its entry's
 * acquire then comes after that instruction, the only access it misses;
 * daemon/mark/mark.c keeps such a combine's old rule for it.
 */
static int scan_function(const char *path, uint64_t off, size_t size, bool *locked,
			 size_t *past_lock, struct batch *b)
{
	struct insn_info in, next;
	uint8_t code[512];
	ssize_t len;
	int fd;

	*locked = false;
	if (past_lock)
		*past_lock = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = pread(fd, code, size && size < sizeof(code) ? size : sizeof(code), off);
	close(fd);
	if (len <= 0)
		return -EINVAL;
	if (decode__insn(code, len, &in) || !in.locked)
		return 0;
	*locked = true;
	if (past_lock && in.length < len &&
	    !decode__insn(code + in.length, len - in.length, &next) && !next.locked)
		*past_lock = in.length;
	for (ssize_t i = 0; b && i < len; i += in.length) {
		if (decode__insn(code + i, len - i, &in))
			break;
		if (in.ret)
			batch_add(b, HB_GROUP_RET_INSN, off + i, KCSAND_HB_LOCK_RDI);
	}
	return 0;
}

/* Plan the probes of one sync function at file offset off. */
static void plan_function(struct history *hist, struct batch *b, const char *path, const char *name,
			  uint64_t off, size_t size, enum kcsand_hb_op op)
{
	size_t before = b->n[HB_GROUP_RET_INSN], first;
	bool locked = false;

	scan_function(path, off, size, &locked, &first, op == KCSAND_HB_LOCK ? b : NULL);
	if (locked && op == KCSAND_HB_OMP_FN && first) {
		batch_add(b, HB_GROUP_ENTRY, off + first, op | (uint64_t)first << 32);
		batch_add(b, HB_GROUP_RETURN, off + first, op);
		return;
	}
	if (locked) {
		if (b->n[HB_GROUP_RET_INSN] == before)
			pr_warn("history: %s in %s cannot be probed (it starts with a locked "
				"instruction): its synchronization is not seen\n", name, path);
		return;
	}
	batch_add(b, HB_GROUP_ENTRY, off, op);
	if (KCSAND_HB_HAS_RETURN(op))
		batch_add(b, HB_GROUP_RETURN, off, op);
}

static int group_attach(struct hb_group *gr)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", gr->file_fd);
	gr->link_fd = uprobe_multi__attach_flags(gr->prog_fd, path, gr->off, gr->cookie, gr->n,
						 gr->pid, gr->flags);
	return gr->link_fd < 0 ? gr->link_fd : 0;
}

static void group_free(struct hb_group *gr)
{
	if (gr->link_fd >= 0)
		close(gr->link_fd);
	if (gr->file_fd >= 0)
		close(gr->file_fd);
	free(gr->off);
	free(gr->cookie);
}

/* Group g of batch b, for process pid, kept and attached. */
static int add_group(struct history *hist, pid_t pid, const char *path, const struct batch *b,
		     int g, int prog_fd)
{
	struct hb_group gr = { .link_fd = -1, .pid = pid, .prog_fd = prog_fd, .n = b->n[g],
			       .flags = g == HB_GROUP_RETURN ? KCSAND_UPROBE_MULTI_RETURN : 0 };
	int err;

	if (ARRAY_RESERVE(hist->groups, hist->cap_groups, hist->nr_groups, 16))
		return -ENOMEM;
	gr.file_fd = open(path, O_RDONLY | O_CLOEXEC);
	gr.off = malloc(gr.n * sizeof(*gr.off));
	gr.cookie = malloc(gr.n * sizeof(*gr.cookie));
	if (gr.file_fd < 0 || !gr.off || !gr.cookie) {
		err = gr.file_fd < 0 ? -errno : -ENOMEM;
		group_free(&gr);
		return err;
	}
	memcpy(gr.off, b->off[g], gr.n * sizeof(*gr.off));
	memcpy(gr.cookie, b->cookie[g], gr.n * sizeof(*gr.cookie));
	/* While the sync probes are off, history__resume() attaches it with the others. */
	err = hist->paused ? 0 : group_attach(&gr);
	if (err) {
		group_free(&gr);
		return err;
	}
	hist->groups[hist->nr_groups++] = gr;
	return 0;
}

static int attach_group(struct history *hist, pid_t pid, const char *path, const struct batch *b,
			int g)
{
	struct bpf_program *prog = g == HB_GROUP_ENTRY ? hist->skel->progs.kcsand_hb_entry :
							 hist->skel->progs.kcsand_hb_return;
	int err;

	if (!b->n[g])
		return 0;
	hist->probes += b->n[g];
	if (!hist->multi) {
		/* Kernels before 6.6: one perf link per probe (slow to detach). */
		for (size_t i = 0; i < b->n[g]; i++) {
			LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = g == HB_GROUP_RETURN,
				    .bpf_cookie = b->cookie[g][i]);
			struct bpf_link *l;
			int err;

			l = bpf_program__attach_uprobe_opts(prog, pid, path, b->off[g][i], &o);
			err = l ? add_link(hist, l) : -errno;
			if (err)
				goto fail;
		}
		return 0;
	}
	err = add_group(hist, pid, path, b, g, bpf_program__fd(prog));
	if (!err)
		return 0;
	errno = -err;
fail:
	err = -errno;	/* before the print callback, which may change errno */
	pr_warn("history: cannot probe the sync functions of %s: %s\n", path, strerror(-err));
	return err;
}

/* The file offset of vaddr: the loadable segment holding it says where it is in the file. */
static int vaddr_to_off(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static bool batch_has(const struct batch *b, uint64_t off)
{
	for (int g = 0; g < HB_GROUPS; g++)
		for (size_t i = 0; i < b->n[g]; i++)
			if (b->off[g][i] == off)
				return true;
	return false;
}

/* What plan_symbol() adds a symbol table's functions to, and how it takes them. */
struct plan_walk {
	struct history *hist;
	struct batch *b;
	const char *path;
	Elf *elf;
	bool lib;
};

/* A function that is a sync function (lib) or an outlined function (!lib), into the batch. */
static int plan_symbol(const struct elf_symbol *sym, void *arg)
{
	const struct plan_walk *w = arg;
	const GElf_Sym *s = &sym->sym;
	const char *name = sym->name;
	enum kcsand_hb_op op;
	uint64_t off;

	if (GELF_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF || !s->st_value ||
	    !name)
		return 0;
	op = w->lib ? history__op_of(name) :
		      history__is_outlined(name) ? KCSAND_HB_OMP_FN : KCSAND_HB_NONE;
	/* Versioned twins at one address (pthread_spin_lock@GLIBC_2.2.5) probed once. */
	if (op == KCSAND_HB_NONE || vaddr_to_off(w->elf, s->st_value, &off) || batch_has(w->b, off))
		return 0;
	plan_function(w->hist, w->b, w->path, name, off, s->st_size, op);
	if (w->lib)
		w->hist->functions++;
	else
		w->hist->outlined++;
	pr_debug("history: %s in %s, sync operation %d\n", name, w->path, op);
	return 0;
}

/*
 * An outlined function that a call to libgomp runs (sites/omp_spawn.c):
 * how a stripped object's are found, which have no symbol.  One the
 * symbol table named is in the batch already.
 */
static int plan_spawned(void *arg, uint64_t vaddr)
{
	const struct plan_walk *w = arg;
	uint64_t off;

	if (vaddr_to_off(w->elf, vaddr, &off) || batch_has(w->b, off))
		return 0;
	plan_function(w->hist, w->b, w->path, "an outlined function", off, 0, KCSAND_HB_OMP_FN);
	w->hist->outlined++;
	w->hist->outlined_spawned++;
	pr_debug("history: outlined function at 0x%llx in %s, from the call that runs it\n",
		 (unsigned long long)vaddr, w->path);
	return 0;
}

/*
 * The sync functions (lib) or outlined functions (!lib) of an object, from
 * its symbol table of type shtype: a library exports its sync functions
 * (.dynsym); outlined functions are local symbols, and so are a static
 * executable's own copies of libc's and libgomp's functions (.symtab).
 * Outlined functions are also found by the calls that run them, for an
 * object stripped of its .symtab (plan_spawned).
 */
static int probe_object(struct history *hist, pid_t pid, const char *path, Elf *elf, bool lib,
			Elf64_Word shtype)
{
	struct batch *b = calloc(1, sizeof(*b));
	struct plan_walk w = { hist, b, path, elf, lib };
	int err = 0;

	if (!b)
		return -ENOMEM;
	elf_symbols__each(elf, shtype == SHT_DYNSYM ? ELF_DYNSYM : ELF_SYMTAB, plan_symbol, &w);
	if (!lib)
		err = omp_spawn__fns(path, elf, plan_spawned, &w);
	for (int g = 0; g < HB_GROUPS && !err; g++)
		err = attach_group(hist, pid, path, b, g);
	free(b);
	return err;
}

/* The libraries prog needs, by name, in the order found, and its run paths. */
struct needed {
	char *name[HB_MAX_LIBS];
	char *path[HB_MAX_LIBS];	/* resolved, or NULL */
	size_t n;
};

static void add_needed(struct needed *nd, const char *name)
{
	for (size_t i = 0; i < nd->n; i++)
		if (!strcmp(nd->name[i], name))
			return;
	if (nd->n < HB_MAX_LIBS)
		nd->name[nd->n++] = strdup(name);
}

static bool try_dir(const char *dir, size_t len, const char *name, char *out, size_t outlen)
{
	snprintf(out, outlen, "%.*s/%s", (int)len, dir, name);
	return access(out, R_OK) == 0;
}

/* A colon-separated list of directories. */
static bool try_dirs(const char *list, const char *name, char *out, size_t outlen)
{
	while (list && *list) {
		size_t len = strcspn(list, ":");

		if (len && try_dir(list, len, name, out, outlen))
			return true;
		list += len + (list[len] == ':');
	}
	return false;
}

static const char sys_dirs[] = "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:"
			       "/lib:/usr/lib:/usr/local/lib";

static char *resolve_lib(const char *name, const char *runpath)
{
	char buf[PATH_MAX];

	if (strchr(name, '/'))
		return access(name, R_OK) ? NULL : realpath(name, NULL);
	if (try_dirs(runpath, name, buf, sizeof(buf)) ||
	    try_dirs(getenv("LD_LIBRARY_PATH"), name, buf, sizeof(buf)) ||
	    try_dirs(sys_dirs, name, buf, sizeof(buf)))
		return realpath(buf, NULL);
	return NULL;
}

/* DT_NEEDED entries of elf into nd, and its DT_RUNPATH (or DT_RPATH) into runpath. */
static void read_dynamic(Elf *elf, struct needed *nd, char *runpath, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
		    !(d = elf_getdata(scn, NULL)) || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *s;
			GElf_Dyn dyn;

			if (!gelf_getdyn(d, i, &dyn))
				continue;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_RPATH)
				continue;
			s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED)
				add_needed(nd, s);
			else if (runpath && !runpath[0])
				snprintf(runpath, len, "%s", s);
		}
	}
}

static void note_lib(struct history *hist, const char *name)
{
	size_t len = strlen(hist->libs);

	if (!strstr(hist->libs, name))
		snprintf(hist->libs + len, sizeof(hist->libs) - len, "%s%s", len ? ", " : "", name);
}

/*
 * The probed files of processes that have exited, forgotten: a service
 * sees a new process every run, and without this the list grew by a few
 * entries each (2 MB over 10,000 runs) and a reused pid passed as probed.
 * Done when the list would grow, so it costs a kill(2) an entry now and then.
 */
static void forget_exited(struct history *hist)
{
	size_t kept = 0;

	for (size_t i = 0; i < hist->nr_probed; i++) {
		pid_t pid = hist->probed[i].pid;

		if (pid > 0 && kill(pid, 0) && errno == ESRCH)
			continue;
		hist->probed[kept++] = hist->probed[i];
	}
	hist->nr_probed = kept;
}

/*
 * Was pid's copy of the file at path probed before?  If not, it is noted
 * as probed now.  By device and inode: /proc/PID/maps and the dynamic
 * linker may name one file by different paths.
 */
static bool probed_before(struct history *hist, pid_t pid, const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return true;	/* gone: nothing left to probe */
	for (size_t i = 0; i < hist->nr_probed; i++)
		if (hist->probed[i].pid == pid && hist->probed[i].dev == st.st_dev &&
		    hist->probed[i].ino == st.st_ino)
			return true;
	if (hist->nr_probed == hist->cap_probed)
		forget_exited(hist);
	if (ARRAY_RESERVE(hist->probed, hist->cap_probed, hist->nr_probed, 16))
		return false;
	hist->probed[hist->nr_probed++] = (struct hb_probed){ pid, st.st_dev, st.st_ino };
	return false;
}

/* Every library of nd, and those they need, whose dynamic symbols include sync functions. */
static int probe_libraries(struct history *hist, pid_t pid, struct needed *nd, const char *runpath)
{
	int err = 0;

	for (size_t i = 0; i < nd->n && !err; i++) {
		unsigned long before = hist->functions;
		struct elf_file ef;

		if (!nd->path[i])
			nd->path[i] = resolve_lib(nd->name[i], runpath);
		if (!nd->path[i] || probed_before(hist, pid, nd->path[i]))
			continue;
		if (elf_file__open(nd->path[i], ELF_C_READ, &ef))
			continue;
		read_dynamic(ef.elf, nd, NULL, 0);
		/* Its own OpenMP regions too, as for a library loaded later (probe_mapped). */
		err = probe_object(hist, pid, nd->path[i], ef.elf, false, SHT_SYMTAB);
		if (!err)
			err = probe_object(hist, pid, nd->path[i], ef.elf, true, SHT_DYNSYM);
		elf_file__close(&ef);
		if (hist->functions > before)
			note_lib(hist, nd->name[i]);
	}
	return err;
}

/*
 * Is pid a child of ours still to exec its program (kcsanctl run's), or a
 * process that runs already (the service's pid targets)?  By what it runs:
 * until its exec, the child runs our own executable.
 */
static bool before_exec(pid_t pid)
{
	struct stat exe, self;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	return !stat(path, &exe) && !stat("/proc/self/exe", &self) && exe.st_dev == self.st_dev &&
	       exe.st_ino == self.st_ino;
}

static int add_tgid(struct history *hist, pid_t pid, bool fresh)
{
	/*
	 * Generation 1 for a process still to exec (nothing of it ran); a
	 * running one starts in 2, whose threads settle (bpf/history_clock.bpf.h).
	 */
	__u32 key = pid, first = fresh ? KCSAND_HB_TGID_GEN | KCSAND_HB_TGID_FRESH :
					 2 * KCSAND_HB_TGID_GEN;


	if (bpf_map_update_elem(bpf_map__fd(hist->skel->maps.hb_tgids), &key, &first, BPF_ANY)) {
		int err = -errno;

		pr_warn("history: cannot give pid %d a history: %s\n", pid, strerror(-err));
		return err;
	}
	hist->skel->bss->hb_enabled = 1;
	return 0;
}

static int probe_maps(struct history *hist, pid_t pid);

/*
 * A process that ran before it was added: its sync functions from what it
 * maps, and its threads, whose earlier sync went unseen, each acquire
 * every epoch at their first event (bpf/history.bpf.h, hb_new_thread).
 */
static int add_running(struct history *hist, pid_t pid)
{
	int err = probe_maps(hist, pid);

	if (err) {
		pr_warn("history: cannot probe the sync functions of pid %d: %s\n", pid,
			strerror(-err));
		return err;
	}
	return add_tgid(hist, pid, false);
}

/*
 * The libraries the dynamic linker maps for prog, in place of its needed
 * names: their copies found through $ORIGIN, RUNPATH, ld.so.cache or
 * LD_PRELOAD, not a system copy the process never maps.  Left as they are
 * when the linker cannot be asked.
 */
static void use_ldso(const char *prog, struct needed *nd)
{
	char *names[HB_MAX_LIBS], *paths[HB_MAX_LIBS];
	size_t n;

	if (history_ldso_list(prog, names, paths, HB_MAX_LIBS, &n))
		return;
	for (size_t i = 0; i < nd->n; i++)
		free(nd->name[i]);
	memcpy(nd->name, names, n * sizeof(names[0]));
	memcpy(nd->path, paths, n * sizeof(paths[0]));
	nd->n = n;
}

int history__add_process(struct history *hist, pid_t pid, const char *prog)
{
	char runpath[PATH_MAX] = "";
	struct needed nd = {};
	struct elf_file ef;
	int err;

	/* A process that runs already: what it maps now is what it runs (history__poll). */
	if (!before_exec(pid))
		return add_running(hist, pid);
	err = elf_file__open(prog, ELF_C_READ, &ef);
	if (err) {
		pr_warn("history: cannot read %s: %s\n", prog, strerror(-err));
		return err;
	}
	read_dynamic(ef.elf, &nd, runpath, sizeof(runpath));
	if (nd.n)
		use_ldso(prog, &nd);
	probed_before(hist, pid, prog);
	err = probe_object(hist, pid, prog, ef.elf, false, SHT_SYMTAB);
	/* A static executable has its sync functions in itself, and no dynamic symbols. */
	if (!err && !nd.n) {
		unsigned long before = hist->functions;

		err = probe_object(hist, pid, prog, ef.elf, true, SHT_SYMTAB);
		if (hist->functions > before)
			note_lib(hist, "static");
	}
	elf_file__close(&ef);
	if (!err)
		err = probe_libraries(hist, pid, &nd, runpath);
	for (size_t i = 0; i < nd.n; i++) {
		free(nd.name[i]);
		free(nd.path[i]);
	}
	if (err)
		return err;
	if (!hist->functions)
		pr_warn("history: no synchronization function found in %s or its libraries: every "
			"access of different threads looks unordered\n", prog);
	return add_tgid(hist, pid, true);
}

/*
 * An object a held process maps now: its sync functions (.dynsym; a
 * static executable's own copies in .symtab) and its OpenMP outlined
 * functions (.symtab: a plugin built with -fopenmp has its own).
 */
static int probe_mapped(struct history *hist, pid_t pid, const char *path)
{
	unsigned long before = hist->functions;
	bool dynamic = false;
	Elf_Scn *scn = NULL;
	struct elf_file ef;
	int err;

	if (elf_file__open(path, ELF_C_READ, &ef))
		return 0;	/* no ELF file (gone, or not one): nothing to probe */
	while ((scn = elf_nextscn(ef.elf, scn))) {
		GElf_Shdr sh;

		dynamic |= gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM;
	}
	err = probe_object(hist, pid, path, ef.elf, false, SHT_SYMTAB);
	if (!err)
		err = probe_object(hist, pid, path, ef.elf, true, dynamic ? SHT_DYNSYM : SHT_SYMTAB);
	elf_file__close(&ef);
	if (hist->functions > before)
		note_lib(hist, strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	return err;
}

struct maps_walk {
	struct history *hist;
	pid_t pid;
};

static int probe_mapping(const struct proc_map *m, void *arg)
{
	struct maps_walk *w = arg;

	if (!proc_map__exec(m) || !proc_map__file(m) || strstr(m->path, " (deleted)") ||
	    probed_before(w->hist, w->pid, m->path))
		return 0;
	return probe_mapped(w->hist, w->pid, m->path);
}

/* Every executable file mapping of pid that was not probed for it yet. */
static int probe_maps(struct history *hist, pid_t pid)
{
	struct maps_walk w = { hist, pid };

	return proc_maps__for_each(pid, probe_mapping, &w);
}

/*
 * How long pid was held, from hb_hold to its let-go: the daemon's wake-up
 * and its probing, during which the process runs with no history.
 */
static void note_hold_time(struct history *hist, __u32 pid)
{
	int fd = bpf_map__fd(hist->skel->maps.hb_held_ns);
	__u64 since;
	uint64_t now = clock__now_ns(), d;

	if (bpf_map_lookup_elem(fd, &pid, &since) || since > now)
		return;
	bpf_map_delete_elem(fd, &pid);
	d = now - since;
	hist->held_ns += d;
	if (d > hist->held_max_ns)
		hist->held_max_ns = d;
	hist->held_timed++;
}

/*
 * A held process (bpf/history.bpf.h: a forked child, an exec, a dlopen, a
 * process first seen under trace_all): its new objects probed, it is let
 * go in a new generation of its own.  One that cannot be probed stays
 * held, with no history; one that ended is dropped.
 */
static bool take_over(struct history *hist, int map_fd, __u32 pid, __u32 value)
{
	uint64_t t0 = clock__now_ns();
	int err = probe_maps(hist, pid);
	bool new;

	pr_debug("history: pid %u held (%#x): %s in %.1f ms\n", pid, value,
		 err ? strerror(-err) : "what it maps probed, let go",
		 (clock__now_ns() - t0) / 1e6);
	if (err == -ENOENT || err == -ESRCH) {
		bpf_map_delete_elem(map_fd, &pid);
		return false;
	}
	if (err) {
		pr_warn("history: cannot probe the sync functions pid %u mapped: %s; it has no "
			"history\n", pid, strerror(-err));
		return false;
	}
	/* A new process is held in generation 0 (a fork) or 1 (found running); an exec's later. */
	new = value == KCSAND_HB_TGID_HELD || value == (KCSAND_HB_TGID_HELD | KCSAND_HB_TGID_GEN);
	value = (value & ~(KCSAND_HB_TGID_HELD | KCSAND_HB_TGID_FRESH)) + KCSAND_HB_TGID_GEN;
	if (bpf_map_update_elem(map_fd, &pid, &value, BPF_EXIST))
		return false;
	hist->taken_over++;
	note_hold_time(hist, pid);
	return new;
}

/* The links and files of processes that ended: a service outlives many. */
static void prune_ended(struct history *hist)
{
	for (size_t i = 0; i < hist->nr_groups; i++) {
		if (!kill(hist->groups[i].pid, 0) || errno != ESRCH)
			continue;
		group_free(&hist->groups[i]);
		hist->groups[i--] = hist->groups[--hist->nr_groups];
	}
	for (size_t i = 0; i < hist->nr_probed; i++)
		if (kill(hist->probed[i].pid, 0) && errno == ESRCH)
			hist->probed[i--] = hist->probed[--hist->nr_probed];
}

int history__poll(struct history *hist)
{
	__u64 held = __atomic_load_n(&hist->skel->bss->hb_held, __ATOMIC_ACQUIRE);
	int fd = bpf_map__fd(hist->skel->maps.hb_tgids), new = 0;
	__u32 key, next, value;
	__u32 *prev = NULL;

	if (held == hist->held_seen)
		return 0;
	hist->held_seen = held;
	prune_ended(hist);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &value) && (value & KCSAND_HB_TGID_HELD))
			new += take_over(hist, fd, key, value);
	}
	return new;
}

void history__pause(struct history *hist)
{
	struct link_close lc = { .n = 0 };

	if (hist->paused || !hist->multi || !hist->nr_groups)
		return;
	/*
	 * Nothing remembered from here: the release below may already be
	 * unseen.  The links close together: each waits for a grace period,
	 * and the sampler's ticks wait too.
	 */
	history__hand_links(hist, &lc);
	link_close__all(&lc);
	hist->paused = true;
	hist->pauses++;
}

int history__resume(struct history *hist)
{
	int err = 0;

	if (!hist->paused || hist->lost)
		return hist->lost ? -EIO : 0;
	for (size_t i = 0; i < hist->nr_groups; i++) {
		struct hb_group *gr = &hist->groups[i];
		int r = group_attach(gr);

		if (r == -ESRCH) {
			/* Its process ended: nothing left to put back. */
			group_free(gr);
			hist->groups[i--] = hist->groups[--hist->nr_groups];
		} else if (r) {
			pr_warn("history: cannot put back the sync probes of pid %d: %s; the "
				"history detector stays off\n", gr->pid, strerror(-r));
			hist->lost++;
			err = r;
		}
	}
	if (err)
		return err;
	/* Every probe is on again: a new generation, whose history starts empty. */
	__atomic_add_fetch(&hist->skel->bss->hb_gen, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&hist->skel->bss->hb_paused, 0, __ATOMIC_SEQ_CST);
	hist->paused = false;
	return 0;
}

double history__cost_ns(const struct history *hist, double trap_ns)
{
	const __u64 *c = hist->skel->bss->hb_counters;

	return (double)__atomic_load_n(&c[KCSAND_HB_CTR_SYNC_OPS], __ATOMIC_RELAXED) * trap_ns +
	       (double)__atomic_load_n(&c[KCSAND_HB_CTR_SYNC_NS], __ATOMIC_RELAXED);
}

void history__get_stats(const struct history *hist, struct history_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < KCSAND_HB_CTR_COUNT; i++)
		out->ctr[i] = __atomic_load_n(&hist->skel->bss->hb_counters[i], __ATOMIC_RELAXED);
	out->probes = hist->probes;
	out->functions = hist->functions;
	out->outlined = hist->outlined;
	out->pauses = hist->pauses;
	out->held = hist->taken_over;
}

uint64_t history__unclocked_hits(const struct history *hist)
{
	return __atomic_load_n(&hist->skel->bss->hb_counters[KCSAND_HB_CTR_NO_SLOT], __ATOMIC_RELAXED);
}

uint64_t history__lost_edges(const struct history *hist)
{
	return __atomic_load_n(&hist->skel->bss->hb_counters[KCSAND_HB_CTR_CAS_LOST],
			       __ATOMIC_RELAXED);
}

static double per(uint64_t total, uint64_t n)
{
	return n ? (double)total / n : 0;
}

/* Atomics learned at run time (bpf/atomics.bpf.h), which the marked count above includes. */
static void print_atomics(const struct history *hist, FILE *out)
{
	uint64_t taught = __atomic_load_n(&hist->skel->bss->atomics_taught, __ATOMIC_RELAXED);
	uint64_t plain = __atomic_load_n(&hist->skel->bss->atomics_plain_hits, __ATOMIC_RELAXED);
	uint64_t lost = __atomic_load_n(&hist->skel->bss->atomics_sites_lost, __ATOMIC_RELAXED);
	uint64_t sites = __atomic_load_n(&hist->skel->bss->atomic_learn_seq, __ATOMIC_RELAXED);

	fprintf(out, "kcsand: atomics learned: %llu addresses taught by lock, xchg and fenced "
		     "stores, %llu plain loads and stores taken as atomic (%llu sites learned from "
		     "another thread's loads before the first release, acquired until armed)%s",
		(unsigned long long)taught, (unsigned long long)plain, (unsigned long long)sites,
		taught > KCSAND_ATOMICS_MAX ? " (more addresses than the map holds: the least "
					      "recently used were forgotten)" : "");
	if (lost)
		fprintf(out, "; %llu sites taking them were left to the sampler (more than %d: "
			     "races they order may be reported)", (unsigned long long)lost,
			KCSAND_ATOMIC_SITES_MAX);
	fprintf(out, "\n");
}

static void print_tasks(const struct history_stats *st, FILE *out)
{
	fprintf(out, "kcsand: history: %llu OpenMP tasks ran on clocks of their own (%llu of them "
		     "sections, %llu host teams; %llu in a slot "
		     "whose last task they had not joined), %llu on their thread's clock (no slot "
		     "free, or nested deeper than it keeps), %llu started after every finished task "
		     "(their creation or depend list not known); %llu detach events fulfilled\n",
		(unsigned long long)st->ctr[KCSAND_HB_CTR_TASKS],
		(unsigned long long)st->ctr[KCSAND_HB_CTR_SECTIONS],
		(unsigned long long)st->ctr[KCSAND_HB_CTR_TEAMS],
		(unsigned long long)st->ctr[KCSAND_HB_CTR_TASK_SLOT_SHARED],
		(unsigned long long)st->ctr[KCSAND_HB_CTR_TASK_NO_CLOCK],
		(unsigned long long)st->ctr[KCSAND_HB_CTR_TASK_VAGUE],
		(unsigned long long)st->ctr[KCSAND_HB_CTR_FULFILLED]);
}

/*
 * -v: threads that shared a clock slot (bpf/history_clock.bpf.h,
 * hb_share_slot).  Their races with each other are not seen: said, so that
 * a silent run with many threads is read for what it checked.
 */
static void print_threads(const struct history_stats *st, FILE *out)
{
	fprintf(out, "kcsand: history: %llu threads shared a clock slot with live ones (more than "
		     "%d alive at once), their races with each other not seen; %llu hits by threads "
		     "with no clock\n",
		(unsigned long long)st->ctr[KCSAND_HB_CTR_SLOT_SHARED], KCSAND_HB_MAX_THREADS,
		(unsigned long long)st->ctr[KCSAND_HB_CTR_NO_SLOT]);
}

/* -v: the watches of reads (bpf/history_watch.bpf.h). */
static void print_watches(const struct history_stats *st, FILE *out)
{
	fprintf(out, "kcsand: history: %llu reads of granules it had nothing of sent to be "
		     "watched for another thread's write, %llu writes caught by those watches "
		     "and checked, %llu traps after (spent, not closed yet), %llu spent unchecked "
		     "with the memory they watched (freed, unmapped)\n",
		(unsigned long long)st->ctr[KCSAND_HB_CTR_WATCH_ASKED],
		(unsigned long long)st->ctr[KCSAND_HB_CTR_WATCH_TRAPS],
		(unsigned long long)st->ctr[KCSAND_HB_CTR_WATCH_STALE],
		(unsigned long long)st->ctr[KCSAND_HB_CTR_WATCH_FORGOTTEN]);
}

void history__print(const struct history *hist, FILE *out)
{
	struct history_stats st;

	history__get_stats(hist, &st);
	fprintf(out, "kcsand: history: %llu sync operations traced at %lu functions (%s) and "
		     "%lu outlined functions (%lu found by the calls that run them), %llu marked accesses as acquire/release (%llu "
		     "releases published ahead of their locked instruction; %llu late, "
		     "%llu races ordered by one in flight, %llu acquires kept past a thread's "
		     "last 4 for them; %llu events inside a spin-wait loop's "
		     "calls, its acquire kept waiting); "
		     "%llu accesses checked (%llu marked), %llu shadow entries live (%llu taken over; "
		     "%llu accesses not remembered, their entry keeping another granule's first read), "
		     "%llu races found, %llu reported; %llu hits by threads without a clock, "
		     "%llu stacks not kept, %llu samples skipped on a busy entry; sync probes "
		     "off %lu times (over their share of the budget); BPF time: "
		     "%.0f ns per checked access, %.0f ns per sync operation\n",
		(unsigned long long)st.ctr[KCSAND_HB_CTR_SYNC_OPS], st.functions,
		hist->libs[0] ? hist->libs : "none", st.outlined, hist->outlined_spawned,
		(unsigned long long)st.ctr[KCSAND_HB_CTR_MARKED],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_AHEAD],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_LATE],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_INFLIGHT],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_ACQ_SPILLED],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_SPIN_WAITED],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_CHECKED],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_MARKED_CHECKED],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_SHADOW_LIVE],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_SHADOW_EVICTED],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_KEPT],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_RACES],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_REPORTS],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_NO_SLOT],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_NO_STACK],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_CONTENDED], st.pauses,
		per(st.ctr[KCSAND_HB_CTR_ACCESS_NS], st.ctr[KCSAND_HB_CTR_CHECKED]),
		per(st.ctr[KCSAND_HB_CTR_SYNC_NS],
		    st.ctr[KCSAND_HB_CTR_SYNC_OPS] + st.ctr[KCSAND_HB_CTR_MARKED] +
		    st.ctr[KCSAND_HB_CTR_AHEAD]));
	print_atomics(hist, out);
	print_watches(&st, out);
	fprintf(out, "kcsand: history: %llu returns of calls it did not remember (nested deeper "
		     "than it keeps, or entered while paused), each taken to acquire every epoch; "
		     "%llu releases into the overflow object (the sync object map was full), which "
		     "every unknown object's acquire acquires; %llu sync objects forgotten with "
		     "their memory; %llu releases that lost an edge\n",
		(unsigned long long)st.ctr[KCSAND_HB_CTR_RETURN_LOST],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_SYNC_FULL],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_SYNC_FREED],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_CAS_LOST]);
	print_tasks(&st, out);
	print_threads(&st, out);
	fprintf(out, "kcsand: history: %llu ranges forgotten (freed, unmapped, new threads' stacks), "
		     "%llu of them kept as ranges; %llu times every older access was forgotten "
		     "(more than %d wide ranges); %lu processes held while what they mapped was "
		     "probed (forks, execs, dlopens, processes found under trace_all), "
		     "%.1f ms on average, %.1f ms at most, running with no history\n",
		(unsigned long long)st.ctr[KCSAND_HB_CTR_FORGET_OPS],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_FORGET_WIDE],
		(unsigned long long)st.ctr[KCSAND_HB_CTR_FORGET_ALL], KCSAND_HB_RANGES,
		hist->taken_over, hist->held_timed ? hist->held_ns / 1e6 / hist->held_timed : 0.0,
		hist->held_max_ns / 1e6);
}

void history__hand_links(struct history *hist, struct link_close *b)
{
	if (!hist)
		return;
	if (hist->skel && hist->skel->bss)
		__atomic_store_n(&hist->skel->bss->hb_paused, 1, __ATOMIC_SEQ_CST);
	for (size_t i = 0; i < hist->nr_groups; i++)
		link_close__add(b, &hist->groups[i].link_fd);
}

void history__free(struct history *hist)
{
	if (!hist)
		return;
	for (size_t i = 0; i < hist->nr_groups; i++)
		group_free(&hist->groups[i]);
	free(hist->groups);
	/* Per-site links (before uprobe_multi) close a grace period or more each: in parallel. */
	link_close__destroy(hist->links, hist->nr_links);
	free(hist->links);
	free(hist->probed);
	free(hist);
}

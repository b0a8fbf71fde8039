// SPDX-License-Identifier: GPL-2.0-only
/*
 * Marking sites from debug info, source and a marks file (see mark.h and
 * docs/marking.md).  Each rule has its table here, in one place:
 *
 *	accessors[]	function names whose accesses are marked (inline accessor rule)
 *	src_markers[]	source tokens that mark the accesses of their call (source rule)
 *
 * The qualifier rule has no table: _Atomic and volatile are the qualifiers.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "mark.h"

static const char *const reason_names[MARK_REASON_COUNT] = {
	[MARK_NONE] = "plain",
	[MARK_LOCK_PREFIX] = "lock prefix",
	[MARK_XCHG] = "xchg",
	[MARK_INLINE_ACCESSOR] = "inline accessor",
	[MARK_QUALIFIER] = "qualifier",
	[MARK_SOURCE_MACRO] = "source macro",
	[MARK_MARKS_FILE] = "marks file",
};

const char *mark_reason_name(uint32_t reason)
{
	if (reason >= MARK_REASON_COUNT || !reason_names[reason])
		return "unknown";
	return reason_names[reason];
}

/* ------------------------------------------------------------ inline accessor rule */

/*
 * Functions whose memory accesses are marked, by qualified-name prefix.
 * out_of_line: also when the site is in the function's own out-of-line
 * copy, not only where it is inlined.  Kernel accessors are
 * __always_inline; an out-of-line function named atomic_* (say
 * atomic_notifier_call_chain) is ordinary code, so they count only inlined.
 * libstdc++'s atomics are called out of line at -O0.
 */
static const struct accessor {
	const char *prefix;
	bool out_of_line;
} accessors[] = {
	/* Linux: include/linux/atomic/atomic-{instrumented,arch-fallback,long}.h */
	{ "atomic_", false },		/* atomic_read, atomic_set, atomic_long_* ... */
	{ "atomic64_", false },
	{ "raw_atomic_", false },	/* raw_atomic_read, raw_atomic_long_* ... */
	{ "raw_atomic64_", false },
	{ "arch_atomic_", false },	/* arch_atomic_read (READ_ONCE inside) ... */
	{ "arch_atomic64_", false },
	/*
	 * test_bit() is an atomic read for KCSAN (instrument_atomic_read in
	 * asm-generic/bitops/instrumented-non-atomic.h), a plain mov on x86.
	 * __test_and_set_bit() and the other non-atomic bitops stay plain.
	 */
	{ "test_bit", false },		/* test_bit, test_bit_acquire */
	{ "_test_bit", false },
	{ "arch_test_bit", false },
	{ "constant_test_bit", false },
	{ "variable_test_bit", false },
	/* READ_ONCE's helpers where they are functions (older kernels, other arches) */
	{ "__READ_ONCE", false },
	{ "__WRITE_ONCE", false },
	{ "__read_once_size", false },
	{ "__write_once_size", false },
	/* libstdc++ <atomic>, <bits/atomic_base.h> */
	{ "std::atomic<", true },	/* std::atomic<T>::load, store, operator T ... */
	{ "std::__atomic_base<", true },
	{ "std::__atomic_float<", true },
	{ "std::__atomic_ref<", true },
	{ "std::atomic_ref<", true },
	{ "std::__atomic_impl::", true },
	{ "std::atomic_flag::", true },
	{ "std::atomic_load", true },	/* std::atomic_load, std::atomic_load_explicit */
	{ "std::atomic_store", true },
};

const char *mark_accessor_match(const char *name, bool inlined)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(accessors) / sizeof(accessors[0]); i++) {
		const struct accessor *a = &accessors[i];

		if (!inlined && !a->out_of_line)
			continue;
		if (!strncmp(name, a->prefix, strlen(a->prefix)))
			return a->prefix;
	}
	return NULL;
}

/* ------------------------------------------------------------ source rule */

#define SRC_PREFIX	(1u << 0)	/* any identifier starting with the name */
#define SRC_METHOD	(1u << 1)	/* a member call: after '.' or '->' */
#define SRC_FIRST_ARG	(1u << 2)	/* only the first argument is the marked access */

/*
 * Source tokens that mark the accesses inside their call, "TOKEN(...)".
 * Stores mark only their first argument (the location): the value stored
 * is read by a plain access.
 */
static const struct src_marker {
	const char *name;
	enum mark_kind kind;
	unsigned int flags;
} src_markers[] = {
	{ "data_race", MARK_KIND_DATA_RACE, 0 },
	/* Linux */
	{ "READ_ONCE", MARK_KIND_MARKED, SRC_PREFIX },		/* READ_ONCE_NOCHECK */
	{ "__READ_ONCE", MARK_KIND_MARKED, 0 },
	{ "WRITE_ONCE", MARK_KIND_MARKED, SRC_FIRST_ARG },
	{ "__WRITE_ONCE", MARK_KIND_MARKED, SRC_FIRST_ARG },
	{ "smp_load_acquire", MARK_KIND_MARKED, 0 },
	{ "smp_store_release", MARK_KIND_MARKED, SRC_FIRST_ARG },
	{ "rcu_dereference", MARK_KIND_MARKED, SRC_PREFIX },	/* _check, _protected, _raw ... */
	{ "rcu_access_pointer", MARK_KIND_MARKED, 0 },
	{ "rcu_assign_pointer", MARK_KIND_MARKED, SRC_FIRST_ARG },
	{ "atomic_read", MARK_KIND_MARKED, SRC_PREFIX },	/* atomic_read_acquire */
	{ "atomic_set", MARK_KIND_MARKED, SRC_PREFIX | SRC_FIRST_ARG },
	{ "atomic64_read", MARK_KIND_MARKED, SRC_PREFIX },
	{ "atomic64_set", MARK_KIND_MARKED, SRC_PREFIX | SRC_FIRST_ARG },
	{ "atomic_long_read", MARK_KIND_MARKED, SRC_PREFIX },
	{ "atomic_long_set", MARK_KIND_MARKED, SRC_PREFIX | SRC_FIRST_ARG },
	/* C11 <stdatomic.h> */
	{ "atomic_load", MARK_KIND_MARKED, SRC_PREFIX },	/* atomic_load_explicit */
	{ "atomic_store", MARK_KIND_MARKED, SRC_PREFIX | SRC_FIRST_ARG },
	/* GCC builtins: __atomic_load_n, __atomic_store_n, __atomic_load ... */
	{ "__atomic_", MARK_KIND_MARKED, SRC_PREFIX },
	/* C++ std::atomic */
	{ "load", MARK_KIND_MARKED, SRC_METHOD },
	{ "store", MARK_KIND_MARKED, SRC_METHOD | SRC_FIRST_ARG },
};

static const struct src_marker *find_marker(const char *id, size_t len, bool method)
{
	for (size_t i = 0; i < sizeof(src_markers) / sizeof(src_markers[0]); i++) {
		const struct src_marker *m = &src_markers[i];
		size_t n = strlen(m->name);

		if (!!(m->flags & SRC_METHOD) != method)
			continue;
		if (n == len && !memcmp(id, m->name, n))
			return m;
		if ((m->flags & SRC_PREFIX) && len > n && !memcmp(id, m->name, n))
			return m;
	}
	return NULL;
}

struct mark_src *mark_src__from_string(const char *text)
{
	struct mark_src *src = calloc(1, sizeof(*src));
	size_t n = 1, cap;
	char *p;

	if (!src)
		return NULL;
	src->buf = strdup(text);
	if (!src->buf)
		goto fail;
	for (p = src->buf; *p; p++)
		n += *p == '\n';
	cap = n;
	src->lines = calloc(cap, sizeof(*src->lines));
	if (!src->lines)
		goto fail;
	p = src->buf;
	while (*p && src->nr_lines < (int)cap) {
		char *nl = strchr(p, '\n');

		src->lines[src->nr_lines++] = p;
		if (!nl)
			break;
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		p = nl + 1;
	}
	return src;
fail:
	mark_src__free(src);
	return NULL;
}

struct mark_src *mark_src__load(const char *path)
{
	struct mark_src *src = NULL;
	struct stat st;
	char *text;
	ssize_t got;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > (64 << 20)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	text = malloc(st.st_size + 1);
	if (text) {
		got = read(fd, text, st.st_size);
		if (got >= 0) {
			text[got] = '\0';
			src = mark_src__from_string(text);
		}
		free(text);
	}
	close(fd);
	return src;
}

void mark_src__free(struct mark_src *src)
{
	if (!src)
		return;
	free(src->lines);
	free(src->buf);
	free(src);
}

/* How far back a marker call may start and still cover the access's line. */
#define SRC_LOOKBACK	8
#define SRC_MAX_DEPTH	64

/* A marker's name as written in the source: points into the line, not NUL-terminated. */
struct src_tok {
	const char *p;
	size_t n;
};

struct src_paren {
	const struct src_marker *m;	/* the call this parenthesis opens, or NULL */
	struct src_tok id;
	enum mark_kind kind;		/* what it marks now: PLAIN after a FIRST_ARG's comma */
};

struct src_scan {
	struct src_paren stack[SRC_MAX_DEPTH];
	int depth;			/* may exceed SRC_MAX_DEPTH: deeper ones are not kept */
	const struct src_marker *pending;	/* marker name seen, its '(' not yet */
	struct src_tok pending_id;
	enum mark_kind at_kind;		/* verdict at the column */
	struct src_tok at_token;
	enum mark_kind line_kind;	/* verdict for the whole line */
	struct src_tok line_token;
};

static void take(enum mark_kind *kind, struct src_tok *token, enum mark_kind k, struct src_tok t)
{
	if (k > *kind) {
		*kind = k;
		*token = t;
	}
}

/* The strongest marker whose call is open here. */
static void open_kind(const struct src_scan *s, enum mark_kind *kind, struct src_tok *token)
{
	int n = s->depth < SRC_MAX_DEPTH ? s->depth : SRC_MAX_DEPTH;

	for (int i = 0; i < n; i++)
		if (s->stack[i].m)
			take(kind, token, s->stack[i].kind, s->stack[i].id);
}

static bool is_id(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Is the text before position i (on this line) a member access, '.' or '->'? */
static bool after_member_op(const char *s, size_t i)
{
	while (i > 0 && isspace((unsigned char)s[i - 1]))
		i--;
	if (i >= 1 && s[i - 1] == '.')
		return true;
	return i >= 2 && s[i - 1] == '>' && s[i - 2] == '-';
}

/* Scan one line; col is the 1-based column to judge on the target line, 0 for none. */
static void scan_line(struct src_scan *s, const char *str, bool target, int col, bool *in_comment)
{
	size_t len = strlen(str), i = 0;

	if (target)
		open_kind(s, &s->line_kind, &s->line_token);
	while (i < len) {
		char c = str[i];
		bool at = target && col == (int)i + 1;

		if (*in_comment) {
			if (c == '*' && str[i + 1] == '/') {
				*in_comment = false;
				i++;
			}
			i++;
			continue;
		}
		if (c == '/' && str[i + 1] == '*') {
			*in_comment = true;
			i += 2;
			continue;
		}
		if (c == '/' && str[i + 1] == '/')
			break;
		if (c == '"' || c == '\'') {
			for (i++; i < len && str[i] != c; i++)
				if (str[i] == '\\')
					i++;
			i++;
			s->pending = NULL;
			continue;
		}
		if (isalpha((unsigned char)c) || c == '_') {
			size_t j = i;
			const struct src_marker *m;

			while (j < len && is_id(str[j]))
				j++;
			m = find_marker(str + i, j - i, after_member_op(str, i));
			s->pending = m;
			s->pending_id = (struct src_tok){ str + i, j - i };
			if (target && m)
				take(&s->line_kind, &s->line_token, m->kind, s->pending_id);
			if (target && col > (int)i && col <= (int)j) {
				open_kind(s, &s->at_kind, &s->at_token);
				if (m)
					take(&s->at_kind, &s->at_token, m->kind, s->pending_id);
			}
			i = j;
			continue;
		}
		if (c == '(') {
			if (s->depth < SRC_MAX_DEPTH)
				s->stack[s->depth] = (struct src_paren){
					.m = s->pending,
					.id = s->pending_id,
					.kind = s->pending ? s->pending->kind : MARK_KIND_PLAIN,
				};
			s->depth++;
			s->pending = NULL;
		} else if (c == ')') {
			if (at)
				open_kind(s, &s->at_kind, &s->at_token);
			at = false;
			if (s->depth > 0)
				s->depth--;
			s->pending = NULL;
		} else if (c == ',') {
			if (s->depth > 0 && s->depth <= SRC_MAX_DEPTH) {
				struct src_paren *p = &s->stack[s->depth - 1];

				if (p->m && (p->m->flags & SRC_FIRST_ARG))
					p->kind = MARK_KIND_PLAIN;
			}
			s->pending = NULL;
		} else if (!isspace((unsigned char)c)) {
			s->pending = NULL;
		}
		if (at)
			open_kind(s, &s->at_kind, &s->at_token);
		i++;
	}
}

bool mark_src__col_informative(const struct mark_src *src, int line, int col)
{
	const char *text;

	if (!src || line < 1 || line > src->nr_lines)
		return false;
	text = src->lines[line - 1];
	/*
	 * gcc gives the column of a brace, or one past the statement, to code
	 * it cannot place more precisely (a return value loaded at the '}'):
	 * such a column says nothing about which expression it is.
	 */
	return col > 0 && col <= (int)strlen(text) && text[col - 1] != '{' && text[col - 1] != '}';
}

enum mark_kind mark_src__at(const struct mark_src *src, int line, int col, const char **token)
{
	struct src_scan s = {};
	/* The token as written ("atomic_load_explicit"), valid until the next call. */
	static __thread char tokbuf[64];
	bool in_comment = false, use_col;
	struct src_tok tok;
	enum mark_kind kind;
	int first;

	if (token)
		*token = NULL;
	if (!src || line < 1 || line > src->nr_lines)
		return MARK_KIND_PLAIN;
	use_col = mark_src__col_informative(src, line, col);
	first = line > SRC_LOOKBACK ? line - SRC_LOOKBACK : 1;
	for (int l = first; l <= line; l++)
		scan_line(&s, src->lines[l - 1], l == line, use_col ? col : 0, &in_comment);
	if (use_col) {
		kind = s.at_kind;
		tok = s.at_token;
	} else {
		kind = s.line_kind;
		tok = s.line_token;
	}
	if (token && kind != MARK_KIND_PLAIN && tok.p) {
		snprintf(tokbuf, sizeof(tokbuf), "%.*s", (int)tok.n, tok.p);
		*token = tokbuf;
	}
	return kind;
}

/* ------------------------------------------------------------ marks file */

enum entry_type { ENT_FUNC, ENT_FUNC_OFF, ENT_FILE_LINE };

struct mark_entry {
	enum entry_type type;
	char *name;		/* function or file */
	uint64_t off;
	int line;
	enum mark_kind kind;
};

struct mark_rules {
	struct mark_entry *v;
	size_t n;
};

void mark_rules__free(struct mark_rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].name);
	free(r->v);
	free(r);
}

size_t mark_rules__count(const struct mark_rules *r)
{
	return r ? r->n : 0;
}

/* Parse SPEC into e; a message for the caller in *why when bad. */
static int parse_spec(const char *spec, struct mark_entry *e, const char **why)
{
	const char *plus = strchr(spec, '+'), *colon = strrchr(spec, ':');
	char *end;

	if (plus && plus != spec) {
		errno = 0;
		e->off = strtoull(plus + 1, &end, 0);
		if (errno || end == plus + 1 || *end || plus[1] == '-') {
			*why = "bad offset after '+' (expected FUNC+0xOFF)";
			return -EINVAL;
		}
		e->type = ENT_FUNC_OFF;
		e->name = strndup(spec, plus - spec);
		return e->name ? 0 : -ENOMEM;
	}
	if (plus) {
		*why = "no function before '+'";
		return -EINVAL;
	}
	/* FILE:LINE, but not a C++ name's "::" */
	if (colon && colon[1] && colon > spec && colon[-1] != ':' &&
	    strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		long line = strtol(colon + 1, NULL, 10);

		if (line <= 0 || line > 10000000) {
			*why = "bad line number (expected FILE:LINE, LINE from 1)";
			return -EINVAL;
		}
		e->type = ENT_FILE_LINE;
		e->line = (int)line;
		e->name = strndup(spec, colon - spec);
		return e->name ? 0 : -ENOMEM;
	}
	if (colon && colon[1] != '\0' && isdigit((unsigned char)colon[1])) {
		*why = "bad line number (expected FILE:LINE)";
		return -EINVAL;
	}
	if (colon && !colon[1]) {
		*why = "no line number after ':' (expected FILE:LINE)";
		return -EINVAL;
	}
	e->type = ENT_FUNC;
	e->name = strdup(spec);
	return e->name ? 0 : -ENOMEM;
}

static int parse_line(char *s, struct mark_entry *e, const char **why)
{
	char *spec, *kind, *extra, *save = NULL;
	char *hash = strchr(s, '#');

	if (hash)
		*hash = '\0';
	spec = strtok_r(s, " \t\r\v\f", &save);
	if (!spec)
		return 1;	/* blank or comment */
	kind = strtok_r(NULL, " \t\r\v\f", &save);
	extra = strtok_r(NULL, " \t\r\v\f", &save);
	if (!kind) {
		*why = "no kind (expected 'SPEC marked' or 'SPEC data_race')";
		return -EINVAL;
	}
	if (extra) {
		*why = "trailing text (expected 'SPEC KIND')";
		return -EINVAL;
	}
	if (!strcmp(kind, "marked")) {
		e->kind = MARK_KIND_MARKED;
	} else if (!strcmp(kind, "data_race")) {
		e->kind = MARK_KIND_DATA_RACE;
	} else {
		*why = "unknown kind (expected marked or data_race)";
		return -EINVAL;
	}
	return parse_spec(spec, e, why);
}

int mark_rules__parse(const char *name, const char *text, struct mark_rules **out)
{
	struct mark_rules *r = calloc(1, sizeof(*r));
	char *copy = strdup(text), *p;
	size_t cap = 0;
	int lineno = 0, err = 0;

	*out = NULL;
	if (!r || !copy) {
		free(copy);
		free(r);
		return -ENOMEM;
	}
	/* strsep keeps empty lines, so that the line numbers are right */
	p = copy;
	while (p) {
		char *line = strsep(&p, "\n");
		struct mark_entry e = {};
		const char *why = NULL;
		int rc;

		lineno++;
		rc = parse_line(line, &e, &why);
		if (rc == 1)
			continue;
		if (rc) {
			if (why)
				fprintf(stderr, "kcsand: %s:%d: %s\n", name, lineno, why);
			err = rc;
			free(e.name);
			break;
		}
		if (r->n == cap) {
			struct mark_entry *v;

			cap = cap ? cap * 2 : 16;
			v = realloc(r->v, cap * sizeof(*v));
			if (!v) {
				free(e.name);
				err = -ENOMEM;
				break;
			}
			r->v = v;
		}
		r->v[r->n++] = e;
	}
	free(copy);
	if (err) {
		mark_rules__free(r);
		return err;
	}
	*out = r;
	return 0;
}

int mark_rules__load(const char *path, struct mark_rules **out)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	FILE *f = fopen(path, "re");
	int err;

	*out = NULL;
	if (!f) {
		err = -errno;
		fprintf(stderr, "kcsand: %s: cannot open the marks file: %s\n", path,
			strerror(-err));
		return err;
	}
	for (;;) {
		size_t got;

		if (cap - len < 4097) {
			char *t = realloc(text, cap = cap ? cap * 2 : 8192);

			if (!t) {
				free(text);
				fclose(f);
				return -ENOMEM;
			}
			text = t;
		}
		got = fread(text + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "kcsand: %s: cannot read the marks file\n", path);
		free(text);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	text[len] = '\0';
	if (memchr(text, '\0', len)) {
		fprintf(stderr, "kcsand: %s: not a text file\n", path);
		free(text);
		return -EINVAL;
	}
	err = mark_rules__parse(path, text, out);
	free(text);
	return err;
}

/* Does the DWARF path end in the marks file's FILE, on a path-component boundary? */
static bool file_matches(const char *path, const char *file)
{
	size_t lp = strlen(path), lf = strlen(file);

	if (lf > lp)
		return false;
	if (strcmp(path + lp - lf, file))
		return false;
	return lp == lf || path[lp - lf - 1] == '/' || file[0] == '/';
}

enum mark_kind mark_rules__match(const struct mark_rules *r, const char *func, uint64_t off,
				 const char *file, int line)
{
	enum mark_kind kind = MARK_KIND_PLAIN;

	if (!r)
		return kind;
	for (size_t i = 0; i < r->n; i++) {
		const struct mark_entry *e = &r->v[i];
		bool hit = false;

		switch (e->type) {
		case ENT_FUNC:
			hit = func && !strcmp(func, e->name);
			break;
		case ENT_FUNC_OFF:
			hit = func && off == e->off && !strcmp(func, e->name);
			break;
		case ENT_FILE_LINE:
			hit = file && line == e->line && file_matches(file, e->name);
			break;
		}
		if (hit && e->kind > kind)
			kind = e->kind;
	}
	return kind;
}

/* ------------------------------------------------------------ debug info */

struct src_cache {
	struct src_cache *next;
	char *path;
	struct mark_src *src;	/* NULL: not found */
};

struct name_cache {
	Dwarf_Off off;
	char *name;		/* qualified name, or NULL when none */
};

struct gvar {
	uint64_t addr, size;
	Dwarf_Die die;
};

/*
 * An opened debug file (struct mark_debug in mark.h).  Addresses "in the
 * file" are libdwfl's module addresses: the link-time vaddr plus elfbias
 * for an executable or shared object, libdwfl's own section layout for a
 * relocatable .ko.  DWARF addresses are those minus dwbias.
 */
struct dw_ctx {
	const struct mark_opts *opts;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf *dw;
	Dwarf_Addr elfbias;		/* module address - link-time vaddr */
	Dwarf_Addr dwbias;		/* module address - DWARF address */
	struct gvar *vars;
	size_t nr_vars;
	bool vars_loaded;
	struct name_cache *names;	/* open addressing, cap_names a power of two */
	size_t nr_names, cap_names;
	struct src_cache *srcs;
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* Open the object's DWARF, here or by build-id / debuglink under /usr/lib/debug. */
static int dw_open(struct dw_ctx *c, const char *path)
{
	Dwarf_Addr elfbias, dwbias;
	Dwfl_Module *mod;

	c->dwfl = dwfl_begin(&offline_callbacks);
	if (!c->dwfl)
		return -ENOMEM;
	dwfl_report_begin(c->dwfl);
	mod = dwfl_report_offline(c->dwfl, path, path, -1);
	if (dwfl_report_end(c->dwfl, NULL, NULL) != 0 || !mod)
		return -ENOEXEC;
	if (!dwfl_module_getelf(mod, &elfbias))
		return -ENOEXEC;
	c->mod = mod;
	c->elfbias = elfbias;
	c->dw = dwfl_module_getdwarf(mod, &dwbias);
	if (!c->dw)
		return -ENODATA;
	c->dwbias = dwbias;
	return 0;
}

static void dw_close(struct dw_ctx *c)
{
	while (c->srcs) {
		struct src_cache *s = c->srcs;

		c->srcs = s->next;
		mark_src__free(s->src);
		free(s->path);
		free(s);
	}
	for (size_t i = 0; i < c->cap_names; i++)
		free(c->names[i].name);
	free(c->names);
	free(c->vars);
	if (c->dwfl)
		dwfl_end(c->dwfl);
}

/* The declaration behind an inlined instance or an out-of-line definition. */
static void decl_die(Dwarf_Die *d)
{
	Dwarf_Attribute a;
	Dwarf_Die t;

	for (int i = 0; i < 8; i++) {
		if ((dwarf_attr(d, DW_AT_abstract_origin, &a) ||
		     dwarf_attr(d, DW_AT_specification, &a)) && dwarf_formref_die(&a, &t)) {
			*d = t;
			continue;
		}
		break;
	}
}

/* "ns::class<T>::name" from the DIE's enclosing namespaces and classes. */
static char *build_qualified_name(Dwarf_Die *d)
{
	const char *name = dwarf_diename(d);
	Dwarf_Die *scopes = NULL;
	char buf[1024];
	size_t len = 0;
	int n;

	if (!name)
		return NULL;
	buf[0] = '\0';
	n = dwarf_getscopes_die(d, &scopes);
	for (int i = n - 1; i >= 1; i--) {
		int tag = dwarf_tag(&scopes[i]);
		const char *sn;

		if (tag != DW_TAG_namespace && tag != DW_TAG_class_type &&
		    tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
			continue;
		sn = dwarf_diename(&scopes[i]);
		len += snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0, "%s::",
				sn ? sn : "(anonymous namespace)");
	}
	free(scopes);
	if (len < sizeof(buf))
		snprintf(buf + len, sizeof(buf) - len, "%s", name);
	return strdup(buf);
}

/* The qualified name of a function DIE, cached by its declaration's offset. */
static const char *qualified_name(struct dw_ctx *c, Dwarf_Die *die)
{
	Dwarf_Die d = *die;
	Dwarf_Off off;
	size_t h;

	decl_die(&d);
	off = dwarf_dieoffset(&d);
	if (c->nr_names * 2 >= c->cap_names) {
		size_t cap = c->cap_names ? c->cap_names * 2 : 256;
		struct name_cache *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (size_t i = 0; i < c->cap_names; i++) {
			if (!c->names[i].off)
				continue;
			h = (c->names[i].off * 0x9E3779B97F4A7C15ull) & (cap - 1);
			while (v[h].off)
				h = (h + 1) & (cap - 1);
			v[h] = c->names[i];
		}
		free(c->names);
		c->names = v;
		c->cap_names = cap;
	}
	h = (off * 0x9E3779B97F4A7C15ull) & (c->cap_names - 1);
	while (c->names[h].off) {
		if (c->names[h].off == off)
			return c->names[h].name;
		h = (h + 1) & (c->cap_names - 1);
	}
	c->names[h].off = off;	/* a DIE's offset is never 0: the CU header is there */
	c->names[h].name = build_qualified_name(&d);
	c->nr_names++;
	return c->names[h].name;
}

/* Inline accessor rule: the accessor's name, or NULL. */
static const char *rule_accessor(struct dw_ctx *c, Dwarf_Die *cu, Dwarf_Addr pc, const char **fn)
{
	Dwarf_Die *scopes = NULL;
	const char *hit = NULL;
	int n = dwarf_getscopes(cu, pc, &scopes);

	for (int i = 0; i < n && !hit; i++) {
		int tag = dwarf_tag(&scopes[i]);
		bool inlined;
		const char *name;

		if (tag == DW_TAG_inlined_subroutine)
			inlined = true;
		else if (tag == DW_TAG_subprogram)
			inlined = dwarf_hasattr(&scopes[i], DW_AT_inline);
		else
			continue;
		name = qualified_name(c, &scopes[i]);
		if (mark_accessor_match(name, inlined)) {
			hit = name;
			*fn = name;
		}
		/* The concrete out-of-line function ends the chain of inlined ones. */
		if (!inlined)
			break;
	}
	free(scopes);
	return hit;
}

static int type_of(Dwarf_Die *d, Dwarf_Die *t)
{
	Dwarf_Attribute a;

	if (!dwarf_attr_integrate(d, DW_AT_type, &a) || !dwarf_formref_die(&a, t))
		return -1;
	return 0;
}

/* "_Atomic" or "volatile" when the object of this type at byte off is so qualified. */
static const char *type_qual_at(Dwarf_Die *type, uint64_t off, int depth)
{
	Dwarf_Die t = *type, next;
	Dwarf_Word sz;

	for (int i = 0; i < 64 && depth < 16; i++) {
		switch (dwarf_tag(&t)) {
		case DW_TAG_atomic_type:
			return "_Atomic";
		case DW_TAG_volatile_type:
			return "volatile";
		case DW_TAG_typedef:
		case DW_TAG_const_type:
		case DW_TAG_restrict_type:
			if (type_of(&t, &next))
				return NULL;
			t = next;
			break;
		case DW_TAG_array_type:
			if (type_of(&t, &next))
				return NULL;
			if (dwarf_aggregate_size(&next, &sz) == 0 && sz)
				off %= sz;
			t = next;
			break;
		case DW_TAG_structure_type:
		case DW_TAG_class_type:
		case DW_TAG_union_type: {
			Dwarf_Die m, mt;

			if (dwarf_child(&t, &m))
				return NULL;
			do {
				Dwarf_Attribute a;
				Dwarf_Word moff = 0;
				const char *q;

				if (dwarf_tag(&m) != DW_TAG_member || type_of(&m, &mt))
					continue;
				if (dwarf_attr(&m, DW_AT_data_member_location, &a) &&
				    dwarf_formudata(&a, &moff))
					continue;
				if (dwarf_aggregate_size(&mt, &sz) || off < moff ||
				    off >= moff + sz)
					continue;
				q = type_qual_at(&mt, off - moff, depth + 1);
				if (q)
					return q;
			} while (dwarf_siblingof(&m, &m) == 0);
			return NULL;
		}
		default:
			return NULL;
		}
	}
	return NULL;
}

static int push_var(struct dw_ctx *c, size_t *cap, Dwarf_Die *d)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t nops;
	Dwarf_Die t;
	Dwarf_Word sz = 1;

	if (!dwarf_attr(d, DW_AT_location, &a) || dwarf_getlocation(&a, &ops, &nops) ||
	    nops != 1 || ops[0].atom != DW_OP_addr)
		return 0;
	if (!type_of(d, &t) && dwarf_aggregate_size(&t, &sz))
		sz = 1;
	if (c->nr_vars == *cap) {
		struct gvar *v;

		*cap = *cap ? *cap * 2 : 256;
		v = realloc(c->vars, *cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->vars = v;
	}
	c->vars[c->nr_vars++] = (struct gvar){ .addr = ops[0].number, .size = sz ? sz : 1,
					       .die = *d };
	return 0;
}

/* Every variable with a static address in the tree under d (globals, statics in functions). */
static int collect_vars(struct dw_ctx *c, size_t *cap, Dwarf_Die *parent, int depth)
{
	Dwarf_Die d;
	int err;

	if (depth > 64 || dwarf_child(parent, &d))
		return 0;
	do {
		switch (dwarf_tag(&d)) {
		case DW_TAG_variable:
			err = push_var(c, cap, &d);
			if (err)
				return err;
			break;
		case DW_TAG_subprogram:
		case DW_TAG_lexical_block:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_namespace:
		case DW_TAG_module:
			err = collect_vars(c, cap, &d, depth + 1);
			if (err)
				return err;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&d, &d) == 0);
	return 0;
}

static int cmp_var(const void *a, const void *b)
{
	const struct gvar *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int load_vars(struct dw_ctx *c)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;
	int err;

	c->vars_loaded = true;
	while (dwarf_nextcu(c->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(c->dw, off + hsize, &cu)) {
			err = collect_vars(c, &cap, &cu, 0);
			if (err)
				return err;
		}
		off = next;
	}
	qsort(c->vars, c->nr_vars, sizeof(*c->vars), cmp_var);
	return 0;
}

uint64_t mark__static_target(const struct site *s)
{
	const struct kcsand_site *d = &s->desc;

	if (d->index != KCSAND_REG_NONE)
		return 0;
	if (d->base == KCSAND_REG_RIP)
		return s->vaddr + d->insn_len + d->disp;
	if (d->base == KCSAND_REG_NONE)
		return (uint64_t)d->disp;	/* absolute: -mcmodel=kernel */
	return 0;
}

/* Qualifier rule for a static target (module address): "volatile NAME" in buf, or NULL. */
static const char *rule_qualifier(struct dw_ctx *c, uint64_t target, char *buf, size_t len)
{
	size_t lo = 0, hi;
	const char *q;
	Dwarf_Die t;

	if (!target)
		return NULL;
	if (!c->vars_loaded && load_vars(c))
		return NULL;
	target -= c->dwbias;
	hi = c->nr_vars;
	while (lo < hi) {	/* first var above target */
		size_t mid = lo + (hi - lo) / 2;

		if (c->vars[mid].addr <= target)
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * Variables can share addresses (aliases, a static's copies): look at the
	 * few below the target, nearest first; a large array further down still
	 * covers it when nothing smaller lies in between.
	 */
	for (size_t i = lo, seen = 0; i-- > 0 && seen < 64; seen++) {
		struct gvar *v = &c->vars[i];

		if (target >= v->addr + v->size || type_of(&v->die, &t))
			continue;
		q = type_qual_at(&t, target - v->addr, 0);
		if (q) {
			const char *name = dwarf_diename(&v->die);

			snprintf(buf, len, "%s %s", q, name ? name : "(unnamed)");
			return buf;
		}
	}
	return NULL;
}

/* The source file for a DWARF path: under --source-dir first (any path suffix), then as is. */
static struct mark_src *source_get(struct dw_ctx *c, const char *path)
{
	struct src_cache *sc;
	struct mark_src *src = NULL;
	const char *dir = c->opts ? c->opts->source_dir : NULL;

	for (sc = c->srcs; sc; sc = sc->next)
		if (!strcmp(sc->path, path))
			return sc->src;
	if (dir && *dir) {
		for (const char *p = path; p && !src; p = strchr(p, '/')) {
			char buf[4096];

			while (*p == '/')
				p++;
			if (!*p)
				break;
			snprintf(buf, sizeof(buf), "%s/%s", dir, p);
			src = mark_src__load(buf);
		}
	}
	if (!src)
		src = mark_src__load(path);
	sc = calloc(1, sizeof(*sc));
	if (!sc) {
		mark_src__free(src);
		return NULL;
	}
	sc->path = strdup(path);
	if (!sc->path) {
		free(sc);
		mark_src__free(src);
		return NULL;
	}
	sc->src = src;
	sc->next = c->srcs;
	c->srcs = sc;
	return src;
}

/* One row of the line table: where an instruction came from. */
struct src_row {
	const char *file;
	int line, col;
};

/*
 * The rows for the instruction at pc, its own (the last one at pc, or the
 * one covering pc) first, then the earlier rows at the same address (views:
 * statements that begin there).  Returns how many were stored.
 */
static int site_rows(Dwarf_Die *cu, Dwarf_Addr pc, struct src_row *rows, int max)
{
	Dwarf_Lines *lines;
	size_t n, lo = 0, hi;
	int nr = 0;

	if (dwarf_getsrclines(cu, &lines, &n) || !n)
		return 0;
	hi = n;
	while (lo < hi) {	/* first row above pc */
		size_t mid = lo + (hi - lo) / 2;
		Dwarf_Addr a;

		if (dwarf_lineaddr(dwarf_onesrcline(lines, mid), &a) || a <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && nr < max;) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		bool end = false;

		if (dwarf_lineaddr(l, &a) || dwarf_lineendsequence(l, &end) || end)
			break;
		if (nr && a != pc)
			break;
		rows[nr].file = dwarf_linesrc(l, NULL, NULL);
		if (!rows[nr].file || dwarf_lineno(l, &rows[nr].line))
			break;
		if (dwarf_linecol(l, &rows[nr].col))
			rows[nr].col = 0;
		nr++;
		if (a != pc)
			break;	/* the covering row of an instruction without its own */
	}
	return nr;
}

/* ------------------------------------------------------------ applying */

int mark_debug__open(const char *path, const struct mark_opts *opts, struct mark_debug **out)
{
	static const struct mark_opts no_opts;
	struct dw_ctx *c = calloc(1, sizeof(*c));
	int err;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->opts = opts ? opts : &no_opts;
	err = dw_open(c, path);
	if (err) {
		dw_close(c);
		free(c);
		return err;
	}
	*out = (struct mark_debug *)c;
	return 0;
}

void mark_debug__close(struct mark_debug *d)
{
	if (!d)
		return;
	dw_close((struct dw_ctx *)d);
	free(d);
}

int mark_debug__sym(struct mark_debug *d, const char *name, bool func, uint64_t *addr,
		    uint64_t *size)
{
	struct dw_ctx *c = (struct dw_ctx *)d;
	int n = dwfl_module_getsymtab(c->mod);

	for (int i = 0; i < n; i++) {
		GElf_Addr a;
		GElf_Sym sym;
		const char *sn = dwfl_module_getsym_info(c->mod, i, &sym, &a, NULL, NULL, NULL);

		if (!sn || strcmp(sn, name) || sym.st_shndx == SHN_UNDEF)
			continue;
		if (func && GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		*addr = a;
		if (size)
			*size = sym.st_size;
		return 0;
	}
	return -ENOENT;
}

static void set_mark(struct site *s, enum mark_kind kind, enum mark_reason reason)
{
	s->desc.flags |= KCSAND_SITE_MARKED;
	if (kind == MARK_KIND_DATA_RACE)
		s->desc.flags |= KCSAND_SITE_DATA_RACE;
	s->reason = reason;
}

void mark__reset(struct target_obj *obj)
{
	for (size_t i = 0; i < obj->sites.n; i++) {
		struct site *s = &obj->sites.v[i];

		s->desc.flags &= ~(KCSAND_SITE_MARKED | KCSAND_SITE_DATA_RACE);
		s->reason = s->insn_reason;
		if (s->reason != MARK_NONE)
			s->desc.flags |= KCSAND_SITE_MARKED;
	}
}

void mark__site(struct site *s, const struct mark_where *w, const struct mark_opts *opts,
		struct mark_stats *stats)
{
	struct dw_ctx *c = (struct dw_ctx *)w->dbg;
	const char *file = NULL, *detail = NULL, *tok = NULL;
	enum mark_kind mf, src = MARK_KIND_PLAIN;
	uint32_t before = s->reason;
	int line = 0, col = 0, alt_line = 0;
	Dwarf_Die cu, *cup = NULL;
	Dwarf_Addr pc = c ? w->pc - c->dwbias : 0;
	char qbuf[256];

	if (c && c->dw && w->has_pc && dwarf_addrdie(c->dw, pc, &cu)) {
		struct src_row rows[8];
		int n = site_rows(&cu, pc, rows, 8);
		struct mark_src *ms = n ? source_get(c, rows[0].file) : NULL;

		cup = &cu;
		if (n) {
			file = rows[0].file;
			line = rows[0].line;
			col = rows[0].col;
		}
		/*
		 * The instruction's own row can point at a brace (gcc puts a
		 * returned value's load at the closing '}'): then the
		 * statement it belongs to, the row before at the same
		 * address, decides, by its line alone.
		 */
		if (ms && n > 1 && !mark_src__col_informative(ms, line, col)) {
			alt_line = line;
			file = rows[1].file;
			line = rows[1].line;
			col = 0;
			ms = source_get(c, file);
		}
		if (ms && line > 0)
			src = mark_src__at(ms, line, col, &tok);
		else if (n)
			stats->no_source++;
	}
	mf = mark_rules__match(opts->rules, w->func, w->off, file, line);
	if (alt_line && mf == MARK_KIND_PLAIN)
		mf = mark_rules__match(opts->rules, w->func, w->off, file, alt_line);

	if (mf == MARK_KIND_DATA_RACE) {
		set_mark(s, mf, MARK_MARKS_FILE);
		detail = "data_race";
	} else if (src == MARK_KIND_DATA_RACE) {
		set_mark(s, src, MARK_SOURCE_MACRO);
		detail = tok;
	} else if (s->reason != MARK_NONE) {
		return;
	} else if (mf == MARK_KIND_MARKED) {
		set_mark(s, mf, MARK_MARKS_FILE);
		detail = "marked";
	} else if (cup && rule_accessor(c, cup, pc, &detail)) {
		set_mark(s, MARK_KIND_MARKED, MARK_INLINE_ACCESSOR);
	} else if (c && c->dw && (detail = rule_qualifier(c, w->target, qbuf, sizeof(qbuf)))) {
		set_mark(s, MARK_KIND_MARKED, MARK_QUALIFIER);
	} else if (src == MARK_KIND_MARKED) {
		set_mark(s, src, MARK_SOURCE_MACRO);
		detail = tok;
	}
	if (opts->verbose >= 2 && s->reason != before)
		fprintf(stderr,
			"kcsand: mark: %s+0x%" PRIx64 " (0x%" PRIx64 ") %s:%d:%d: %s%s: %s\n",
			w->func ? w->func : "?", w->off, s->vaddr, file ? file : "?", line, col,
			(s->desc.flags & KCSAND_SITE_DATA_RACE) ? "data_race, " : "",
			mark_reason_name(s->reason), detail ? detail : "");
}

void mark__update_stats(struct target_obj *obj)
{
	obj->stats.marked = 0;
	for (size_t i = 0; i < obj->sites.n; i++)
		if (obj->sites.v[i].desc.flags & KCSAND_SITE_MARKED)
			obj->stats.marked++;
}

int mark__apply(struct target_obj *obj, const struct mark_opts *opts, struct mark_stats *stats)
{
	static const struct mark_opts no_opts;
	struct mark_stats dummy;
	struct mark_debug *dbg = NULL;
	struct dw_ctx *c;
	int err;

	if (!opts)
		opts = &no_opts;
	if (!stats)
		stats = &dummy;
	memset(stats, 0, sizeof(*stats));
	err = mark_debug__open(obj->path, opts, &dbg);
	if (err && err != -ENODATA && err != -ENOEXEC)
		return err;
	stats->dwarf = !err;
	c = (struct dw_ctx *)dbg;

	/* Start from what the instructions say, so that marking can run again (new marks file). */
	mark__reset(obj);
	for (size_t i = 0; i < obj->sites.n; i++) {
		struct site *s = &obj->sites.v[i];
		const struct elf_func *f = s->func < obj->nr_funcs ? &obj->funcs[s->func] : NULL;
		uint64_t target = mark__static_target(s);
		struct mark_where w = {
			.func = f ? f->name : NULL,
			.off = f ? s->vaddr - f->vaddr : 0,
			.dbg = dbg,
			.has_pc = dbg != NULL,
			.pc = c ? s->vaddr + c->elfbias : 0,
			.target = c && target ? target + c->elfbias : 0,
		};

		mark__site(s, &w, opts, stats);
	}
	mark__update_stats(obj);
	mark_debug__close(dbg);
	return 0;
}

void mark__count(const struct site *sites, size_t n, uint64_t *counts, uint64_t *data_race)
{
	for (size_t i = 0; i < n; i++) {
		if (sites[i].reason < MARK_REASON_COUNT)
			counts[sites[i].reason]++;
		if (data_race && (sites[i].desc.flags & KCSAND_SITE_DATA_RACE))
			(*data_race)++;
	}
}

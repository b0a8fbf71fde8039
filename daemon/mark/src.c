// SPDX-License-Identifier: GPL-2.0-only
/*
 * The source rule's scanner (mark.h, docs/marking.md): source files split
 * into lines, and what the marker calls open at a line and column say
 * about the access there.  The markers themselves are in tables.c.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "mark_int.h"
#include "util/file.h"

/* A source file past this is generated data, not code a site's line is in. */
#define SRC_MAX_SIZE	(64u << 20)

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
	size_t len;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* A regular file only: a FIFO in a source tree would block the marking. */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    !file__read_text(fd, SRC_MAX_SIZE, &text, &len)) {
		src = mark_src__from_string(text);
		free(text);
	}
	if (src) {
		src->path = strdup(path);
		src->size = st.st_size;
		src->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		if (!src->path) {
			mark_src__free(src);
			src = NULL;
		}
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
	free(src->path);
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
	bool at_open;			/* the column is on a '(' and nothing but space followed yet */
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

/* Past the string or character literal that starts at i. */
static size_t skip_literal(const char *str, size_t len, size_t i)
{
	char quote = str[i];

	for (i++; i < len && str[i] != quote; i++)
		if (str[i] == '\\')
			i++;
	return i + 1;
}

/* The identifier at i: a marker, or what a following '(' calls; returns its end. */
static size_t scan_word(struct src_scan *s, const char *str, size_t len, size_t i, bool target,
			int col)
{
	size_t j = i;
	const struct src_marker *m;

	while (j < len && is_id(str[j]))
		j++;
	m = mark_find_marker(str + i, j - i, after_member_op(str, i));
	s->pending = m;
	s->pending_id = (struct src_tok){ str + i, j - i };
	if (target && m)
		take(&s->line_kind, &s->line_token, m->kind, s->pending_id);
	if (target && col > (int)i && col <= (int)j) {
		open_kind(s, &s->at_kind, &s->at_token);
		if (m)
			take(&s->at_kind, &s->at_token, m->kind, s->pending_id);
	}
	/*
	 * gcc gives an if's or a while's condition the column of its '(': a marker
	 * that opens the condition, "if (data_race(a >= b))", wraps all of it.
	 */
	if (s->at_open && m)
		take(&s->at_kind, &s->at_token, m->kind, s->pending_id);
	s->at_open = false;
	return j;
}

/* Parentheses and commas; at: the judged column is here.  Returns at, still to open. */
static bool scan_punct(struct src_scan *s, char c, bool at)
{
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
	return at;
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
			i = skip_literal(str, len, i);
			s->pending = NULL;
			continue;
		}
		if (isalpha((unsigned char)c) || c == '_') {
			i = scan_word(s, str, len, i, target, col);
			continue;
		}
		if (!isspace((unsigned char)c))
			s->at_open = at && c == '(';
		if (scan_punct(s, c, at))
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

/* How many lines a statement's memory order argument may follow its first. */
#define SRC_ORDER_LINES	3

static const struct {
	const char *word;
	int order;
} src_orders[] = {
	{ "memory_order_relaxed", KCSAND_ORDER_RELAXED },
	{ "__ATOMIC_RELAXED", KCSAND_ORDER_RELAXED },
	{ "memory_order_acquire", KCSAND_ORDER_ACQUIRE },
	{ "memory_order_consume", KCSAND_ORDER_ACQUIRE },
	{ "__ATOMIC_ACQUIRE", KCSAND_ORDER_ACQUIRE },
	{ "__ATOMIC_CONSUME", KCSAND_ORDER_ACQUIRE },
	{ "memory_order_release", KCSAND_ORDER_RELEASE },
	{ "__ATOMIC_RELEASE", KCSAND_ORDER_RELEASE },
	{ "memory_order_acq_rel", KCSAND_ORDER_DEFAULT },
	{ "memory_order_seq_cst", KCSAND_ORDER_DEFAULT },
	{ "__ATOMIC_ACQ_REL", KCSAND_ORDER_DEFAULT },
	{ "__ATOMIC_SEQ_CST", KCSAND_ORDER_DEFAULT },
};

int mark_src__order(const struct mark_src *src, int line)
{
	int found = -1;

	if (!src)
		return KCSAND_ORDER_DEFAULT;
	for (int l = line; l > 0 && l <= src->nr_lines && l < line + SRC_ORDER_LINES; l++) {
		for (size_t i = 0; i < sizeof(src_orders) / sizeof(src_orders[0]); i++) {
			if (!mark_src__has_word(src, l, src_orders[i].word))
				continue;
			/* Two orders in one statement (a CAS's success and failure): keep both. */
			if (found >= 0 && found != src_orders[i].order)
				return KCSAND_ORDER_DEFAULT;
			found = src_orders[i].order;
		}
		if (strchr(src->lines[l - 1], ';'))
			break;
	}
	return found < 0 ? KCSAND_ORDER_DEFAULT : found;
}

/* Does text start with `#pragma omp`, then word when given? */
static bool omp_pragma(const char *p, const char *word)
{
	const char *const words[] = { "#", "pragma", "omp", word };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]) && words[i]; i++) {
		size_t n = strlen(words[i]);

		while (isspace((unsigned char)*p))
			p++;
		if (strncmp(p, words[i], n) || (i && is_id(p[n])))
			return false;
		p += n;
	}
	return true;
}

bool mark_src__omp_reduction(const struct mark_src *src, int line)
{
	if (!src || line < 1 || line > src->nr_lines)
		return false;
	return omp_pragma(src->lines[line - 1], NULL) && mark_src__has_word(src, line, "reduction");
}

/* Lines before a relaxed `omp atomic` (from its pragma) or after it where a flush counts. */
#define SRC_FLUSH_LINES	4

/*
 * A `#pragma omp flush` in lines [from, to], other than one whose clause
 * says the other half (`not`: "acquire" for a release flush, "release" for
 * an acquire one).
 */
static bool omp_flush_near(const struct mark_src *src, int from, int to, const char *not)
{
	for (int l = from < 1 ? 1 : from; l <= to && l <= src->nr_lines; l++)
		if (omp_pragma(src->lines[l - 1], "flush") && !mark_src__has_word(src, l, not))
			return true;
	return false;
}

/*
 * A relaxed atomic with a flush beside it (OpenMP 5's release and acquire
 * flushes, its own examples' way to hand data over with relaxed atomics):
 * a flush before the atomic makes its write a release, one after it (the
 * end of the loop that polls a flag) makes its read an acquire.  A flush
 * orders with any relaxed atomic on its side of it; the lines nearby are
 * where programs put the pair.  Each side only adds order: a race between
 * the flush and the atomic may be missed, none is made up.
 */
static int omp_relaxed_flushed(const struct mark_src *src, int line)
{
	bool before = omp_flush_near(src, line - 1 - SRC_FLUSH_LINES, line - 2, "acquire");
	bool after = omp_flush_near(src, line + 1, line + SRC_FLUSH_LINES, "release");

	if (before && after)
		return KCSAND_ORDER_DEFAULT;
	if (before)
		return KCSAND_ORDER_RELEASE;
	return after ? KCSAND_ORDER_ACQUIRE : KCSAND_ORDER_RELAXED;
}

int mark_src__omp_atomic(const struct mark_src *src, int line)
{
	if (!src || line < 2 || line > src->nr_lines || !omp_pragma(src->lines[line - 2], "atomic"))
		return -1;
	/*
	 * OpenMP's default order is relaxed; gcc's code and the programs that
	 * use `atomic read` / `write` as a flag rely on x86's acquire loads and
	 * release stores, so that is what they are taken as unless a clause says.
	 */
	if (mark_src__has_word(src, line - 1, "relaxed"))
		return omp_relaxed_flushed(src, line);
	if (mark_src__has_word(src, line - 1, "acquire"))
		return KCSAND_ORDER_ACQUIRE;
	if (mark_src__has_word(src, line - 1, "release"))
		return KCSAND_ORDER_RELEASE;
	return KCSAND_ORDER_DEFAULT;
}

/*
 * Words that, anywhere in a line and in any case, may say an access there
 * is an atomic's or ordered: a macro that wraps an atomic usually names it
 * (CPython's _Py_atomic_store_relaxed, READ_ONCE, __sync_lock_release).
 */
static const char *const ordering_words[] = {
	"atomic", "volatile", "once", "sync", "fence", "barrier",
	"acquire", "release", "relaxed", "seq_cst", "lock",
};

/* An `=` of its own: not part of ==, !=, <=, >=, nor a compound assignment. */
static bool has_assignment(const char *text)
{
	for (const char *p = strchr(text, '='); p; p = strchr(p + 1, '=')) {
		if (p[1] == '=') {
			p++;
			continue;
		}
		if (p == text || !strchr("=!<>+-*/%&|^", p[-1]))
			return true;
	}
	return false;
}

bool mark_src__plain_assignment(const struct mark_src *src, int line)
{
	const char *text;

	if (!src || line < 1 || line > src->nr_lines)
		return false;
	text = src->lines[line - 1];
	for (size_t i = 0; i < sizeof(ordering_words) / sizeof(*ordering_words); i++)
		if (strcasestr(text, ordering_words[i]))
			return false;
	/* `#pragma omp atomic write` stands on the line before its statement. */
	if (mark_src__omp_atomic(src, line) >= 0)
		return false;
	return has_assignment(text);
}

bool mark_src__has_word(const struct mark_src *src, int line, const char *word)
{
	size_t n = strlen(word);
	const char *text, *p;

	if (!src || line < 1 || line > src->nr_lines)
		return false;
	text = src->lines[line - 1];
	for (p = strstr(text, word); p; p = strstr(p + 1, word))
		if ((p == text || !is_id(p[-1])) && !is_id(p[n]))
			return true;
	return false;
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

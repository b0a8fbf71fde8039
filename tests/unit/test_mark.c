// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of marking: the rule tables, the source scanner on small
 * texts, the marks-file parser, and mark__apply() on fixture functions of
 * this very test binary (built with -g).  No root needed.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "mark/kmark.h"
#include "mark/mark.h"
#include "test.h"

#define ASSERT_ZERO(v, what) ASSERT_EQ(v, 0, what)

/* ---- fixtures for mark__apply: each compiles to one memory access */

#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define data_race(expr) (expr)
#define FIXTURE __attribute__((noipa, used))

volatile int fixture_vol;
int fixture_plain;
struct {
	long plain;
	struct {
		int pad;
		volatile int vol;
	} inner[4];
} fixture_struct;

/*
 * The kernel's jiffies: declared volatile, defined by the linker at a plain
 * u64 (jiffies_64), so no variable's DWARF says volatile at its address.
 */
extern volatile unsigned long fixture_ticks;
__attribute__((used)) unsigned long fixture_ticks_64;
asm(".globl fixture_ticks\n.set fixture_ticks, fixture_ticks_64");

/*
 * A seqcount read section as linux/seqlock.h's inline helpers make it: the read of
 * seqfix_obj.a between them is plain C, and KCSAN takes it as atomic.
 */
struct {
	unsigned int seq;
	long a;
} seqfix_obj;

/* x86's smp_rmb(): a compiler barrier, which keeps the section's reads inside it. */
#define seqfix_rmb() asm volatile("" ::: "memory")

/* 6.1's read_seqcount_begin() is a macro around this inline read of the counter. */
static inline __attribute__((always_inline)) unsigned int __seqprop_sequence(const unsigned int *s)
{
	unsigned int v = READ_ONCE(*s);

	seqfix_rmb();
	return v;
}

static inline __attribute__((always_inline)) int do_read_seqcount_retry(const unsigned int *s,
									 unsigned int start)
{
	seqfix_rmb();
	return READ_ONCE(*s) != start;
}

FIXTURE long seqfix_read_section(void)
{
	unsigned int start;
	long v;

	do {
		start = __seqprop_sequence(&seqfix_obj.seq);
		v = seqfix_obj.a;
	} while (do_read_seqcount_retry(&seqfix_obj.seq, start));
	return v;
}

/* The same read with no section around it: plain. */
FIXTURE long seqfix_read_outside(void)
{
	return seqfix_obj.a;
}

/*
 * linux/rculist.h's loop macro, whose loads are marked inside its definition (here
 * READ_ONCE through a helper macro, as rcu_dereference_raw() is): the site's
 * line shows only the loop macro's name.
 */
struct rcufix_node {
	struct rcufix_node *next;
	long v;
};
struct rcufix_node *rcufix_head;
#define rcufix_deref(p) READ_ONCE(p)
#define list_for_each_entry_rcu(pos, head) \
	for (pos = rcufix_deref(head); pos; pos = rcufix_deref((pos)->next))

FIXTURE long rcufix_walk(void)
{
	struct rcufix_node *n;
	long sum = 0;

	list_for_each_entry_rcu(n, rcufix_head)
		sum += n->v;
	return sum;
}

/* The (shifted) address of a function of o, for placing fake kallsyms entries. */
static uint64_t site_func_vaddr(const struct target_obj *o, const char *name)
{
	for (size_t i = 0; i < o->nr_funcs; i++)
		if (!strcmp(o->funcs[i].name, name))
			return o->funcs[i].vaddr;
	return 0;
}

/* kmark's debug-file lookup: the test binary is module ctx's debug file. */
static const char *kmtest_debug(void *ctx, const char *module)
{
	return module && !strcmp(module, ctx) ? "/proc/self/exe" : NULL;
}

FIXTURE int fixture_read_volatile(void)
{
	return fixture_vol;
}

FIXTURE unsigned long fixture_read_ticks(void)
{
	return fixture_ticks;
}

FIXTURE int fixture_read_member_volatile(void)
{
	return fixture_struct.inner[2].vol;
}

FIXTURE long fixture_read_member_plain(void)
{
	return fixture_struct.plain;
}

FIXTURE int fixture_read_once(int *p)
{
	return READ_ONCE(*p);
}

FIXTURE int fixture_read_plain(void)
{
	return fixture_plain;
}

FIXTURE int fixture_read_data_race(int *p)
{
	return data_race(*p);
}

FIXTURE void fixture_write_by_hand(int v)
{
	fixture_plain = v;
}

/* x86's readl() (asm/io.h): an asm mov from device memory, always inlined. */
static inline __attribute__((always_inline)) unsigned int readl(const volatile void *addr)
{
	unsigned int v;

	asm volatile("movl %1, %0" : "=r"(v) : "m"(*(const volatile unsigned int *)addr) : "memory");
	return v;
}

FIXTURE unsigned int fixture_read_mmio(const volatile void *reg)
{
	return readl(reg);
}

/* ---- helpers */

static enum mark_kind at(const char *text, int line, int col, const char **tok)
{
	struct mark_src *src = mark_src__from_string(text);
	enum mark_kind k = mark_src__at(src, line, col, tok);

	mark_src__free(src);
	return k;
}

/* Parse text as a marks file with stderr captured into msg; returns the parser's result. */
static int parse_capture(const char *text, struct mark_rules **r, char *msg, size_t len)
{
	char path[] = "/tmp/kcsand-test-mark.XXXXXX";
	int fd = mkstemp(path), saved = dup(2), err;
	ssize_t n = 0;

	fflush(stderr);
	if (fd >= 0)
		dup2(fd, 2);
	err = mark_rules__parse("t.marks", text, r);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	msg[0] = '\0';
	if (fd >= 0) {
		n = pread(fd, msg, len - 1, 0);
		msg[n > 0 ? n : 0] = '\0';
		close(fd);
		unlink(path);
	}
	return err;
}

static const struct site *site_in(const struct target_obj *o, const char *func)
{
	for (size_t i = 0; i < o->sites.n; i++) {
		const struct site *s = &o->sites.v[i];

		if (!strcmp(o->funcs[s->func].name, func))
			return s;
	}
	return NULL;
}

int main(void)
{
	TEST(reason_names) {
		for (uint32_t r = 0; r < MARK_REASON_COUNT; r++)
			ASSERT_TRUE(strcmp(mark_reason__name(r), "unknown"),
				    "every reason has a name");
		ASSERT_STREQ(mark_reason__name(MARK_NONE), "plain", "MARK_NONE");
		ASSERT_STREQ(mark_reason__name(MARK_INLINE_ACCESSOR), "inline accessor", "accessor");
		ASSERT_STREQ(mark_reason__name(MARK_REASON_COUNT), "unknown", "out of range");
	}

	TEST(accessor_table) {
		ASSERT_TRUE(mark__accessor_match("atomic_read", true), "atomic_read inlined");
		ASSERT_FALSE(mark__accessor_match("atomic_read", false),
			     "kernel accessor out of line");
		ASSERT_FALSE(mark__accessor_match("atomic_notifier_call_chain", false),
			     "ordinary out-of-line function");
		ASSERT_TRUE(mark__accessor_match("arch_atomic64_read", true), "arch_atomic64_read");
		ASSERT_TRUE(mark__accessor_match("constant_test_bit", true), "test_bit's x86 helper");
		ASSERT_FALSE(mark__accessor_match("__test_and_set_bit", true), "non-atomic bitop");
		ASSERT_TRUE(mark__accessor_match("raw_atomic_long_read", true),
			    "raw_atomic_long_read");
		ASSERT_TRUE(mark__accessor_match("__READ_ONCE", true), "__READ_ONCE");
		ASSERT_TRUE(mark__accessor_match("std::__atomic_base<int>::load", true),
			    "inlined load");
		ASSERT_TRUE(mark__accessor_match("std::__atomic_base<int>::load", false),
			    "-O0 load");
		ASSERT_TRUE(mark__accessor_match("std::atomic<bool>::store", false), "atomic<bool>");
		ASSERT_FALSE(mark__accessor_match("std::vector<int>::size", true), "not an atomic");
		ASSERT_FALSE(mark__accessor_match("reader", true), "plain name");
		ASSERT_FALSE(mark__accessor_match(NULL, true), "no name");
		/* Device memory: never watched. */
		ASSERT_TRUE(mark__io_accessor_match("readl", true), "readl");
		ASSERT_TRUE(mark__io_accessor_match("__raw_writeq", true), "__raw_writeq");
		ASSERT_TRUE(mark__io_accessor_match("ioread32be", false), "ioread32be out of line");
		ASSERT_TRUE(mark__io_accessor_match("memcpy_fromio", true), "memcpy_fromio");
		ASSERT_FALSE(mark__io_accessor_match("readlink", true), "readl is no prefix");
		ASSERT_FALSE(mark__io_accessor_match("readl", false), "an out-of-line readl");
		ASSERT_FALSE(mark__io_accessor_match("atomic_read", true), "not device memory");
		ASSERT_FALSE(mark__io_accessor_match(NULL, true), "no name");
	}

	TEST(source_columns) {
		const char *line = "\tb = READ_ONCE(a) + c;";
		const char *tok = NULL;

		/* columns: b at 2, '=' at 4, READ_ONCE at 6..14, '(' 15, a 16, ')' 17, '+' 19,
								    c 21 */
		ASSERT_EQ(at(line, 1, 6, &tok), MARK_KIND_MARKED, "at READ_ONCE");
		ASSERT_STREQ(tok, "READ_ONCE", "token");
		ASSERT_EQ(at(line, 1, 16, NULL), MARK_KIND_MARKED, "inside the call");
		ASSERT_EQ(at(line, 1, 17, NULL), MARK_KIND_MARKED, "at the closing parenthesis");
		ASSERT_EQ(at(line, 1, 19, NULL), MARK_KIND_PLAIN, "at '+', the plain read of c");
		ASSERT_EQ(at(line, 1, 4, NULL), MARK_KIND_PLAIN, "at '=', the plain store to b");
		ASSERT_EQ(at(line, 1, 0, NULL), MARK_KIND_MARKED, "no column: the line decides");
		ASSERT_EQ(at(line, 1, 99, NULL), MARK_KIND_MARKED,
			  "past the end: the line decides");
		ASSERT_EQ(at("\tx = y;\n}", 2, 1, NULL), MARK_KIND_PLAIN, "brace line, no marker");
	}

	TEST(source_stores_mark_their_location_only) {
		const char *line = "\tWRITE_ONCE(x, y);";

		ASSERT_EQ(at(line, 1, 2, NULL), MARK_KIND_MARKED, "the store, at WRITE_ONCE");
		ASSERT_EQ(at(line, 1, 13, NULL), MARK_KIND_MARKED, "the location argument");
		ASSERT_EQ(at(line, 1, 16, NULL), MARK_KIND_PLAIN, "the value read, y");
		ASSERT_EQ(at("\tatomic_store_explicit(&x, f(y), memory_order_release);", 1, 30,
			  NULL),
			  MARK_KIND_PLAIN, "a nested call in the value");
	}

	TEST(source_sync_lock_release_and_volatile) {
		const char *line = "\t__sync_lock_release(&lock);";
		struct mark_src *src = mark_src__from_string(
			"\twhile (*(volatile int *)&lock)\n\tx = nonvolatile;\n");

		ASSERT_EQ(at(line, 1, 2, NULL), MARK_KIND_MARKED, "the legacy spinlock's release");
		ASSERT_TRUE(mark_src__has_word(src, 1, "volatile"), "a volatile cast");
		ASSERT_FALSE(mark_src__has_word(src, 2, "volatile"), "part of another word");
		ASSERT_FALSE(mark_src__has_word(src, 3, "volatile"), "past the end");
		mark_src__free(src);
	}

	TEST(source_memory_order) {
		struct mark_src *src = mark_src__from_string(
			"\tatomic_fetch_add_explicit(&n, 1, memory_order_relaxed);\n"
			"\t__atomic_store_n(&f, 1,\n"
			"\t\t\t __ATOMIC_RELEASE);\n"
			"\tx = atomic_load(&f);\n"
			"\tatomic_compare_exchange_strong_explicit(&f, &e, 1, memory_order_acq_rel,\n"
			"\t\tmemory_order_relaxed);\n"
			"\twhile (atomic_load_explicit(&f, memory_order_acquire))\n");

		ASSERT_EQ(mark_src__order(src, 1), KCSAND_ORDER_RELAXED, "relaxed fetch_add");
		ASSERT_EQ(mark_src__order(src, 2), KCSAND_ORDER_RELEASE, "the order a line below");
		ASSERT_EQ(mark_src__order(src, 4), KCSAND_ORDER_DEFAULT, "none named: seq_cst");
		ASSERT_EQ(mark_src__order(src, 5), KCSAND_ORDER_DEFAULT, "two orders: the stronger");
		ASSERT_EQ(mark_src__order(src, 7), KCSAND_ORDER_ACQUIRE, "acquire, to the end");
		mark_src__free(src);
	}

	TEST(source_omp_atomic) {
		struct mark_src *src = mark_src__from_string(
			"#pragma omp atomic read\n"
			"\tf = flag;\n"
			"  #  pragma omp atomic write relaxed\n"
			"\tflag = 0;\n"
			"#pragma omp atomics\n"
			"\tg = 1;\n"
			"#pragma omp atomic seq_cst\n"
			"\tx += 1;\n");

		ASSERT_EQ(mark_src__omp_atomic(src, 2), KCSAND_ORDER_DEFAULT, "atomic read");
		ASSERT_EQ(mark_src__omp_atomic(src, 4), KCSAND_ORDER_RELAXED, "a relaxed clause");
		ASSERT_EQ(mark_src__omp_atomic(src, 6), -1, "another word");
		ASSERT_EQ(mark_src__omp_atomic(src, 8), KCSAND_ORDER_DEFAULT, "seq_cst update");
		ASSERT_EQ(mark_src__omp_atomic(src, 1), -1, "no line above");
		ASSERT_EQ(mark_src__omp_atomic(src, 3), -1, "the line under a statement");
		mark_src__free(src);
	}

	TEST(source_omp_atomic_relaxed_beside_a_flush) {
		struct mark_src *src = mark_src__from_string(
			"\tput();\n"					/* 1 */
			"#pragma omp flush\n"				/* 2 */
			"#pragma omp atomic write relaxed\n"		/* 3 */
			"\tflag = 1;\n"				/* 4 */
			"\ta();\n\tb();\n\tc();\n\td();\n"	/* 5-8 */
			"\tdo {\n"					/* 9 */
			"#pragma omp atomic read relaxed\n"		/* 10 */
			"\t\tf = flag;\n"				/* 11 */
			"\t} while (!f);\n"				/* 12 */
			"#pragma omp flush\n"				/* 13 */
			"\tget();\n"					/* 14 */
			"\ta();\n\tb();\n\tc();\n"		/* 15-17 */
			"#pragma omp atomic write relaxed\n"		/* 18 */
			"\tflag = 2;\n"				/* 19 */
			"\ta();\n\tb();\n\tc();\n\td();\n"	/* 20-23 */
			"#pragma omp flush acquire\n"			/* 24 */
			"#pragma omp atomic write relaxed\n"		/* 25 */
			"\tflag = 3;\n"				/* 26 */
			"\ta();\n\tb();\n\tc();\n\td();\n"	/* 27-30 */
			"#pragma omp atomic read relaxed\n"		/* 31 */
			"\tf = flag;\n"				/* 32 */
			"#pragma omp flush release\n");		/* 33 */

		ASSERT_TRUE(src, "source from a string");
		ASSERT_EQ(mark_src__omp_atomic(src, 4), KCSAND_ORDER_RELEASE, "a flush before");
		ASSERT_EQ(mark_src__omp_atomic(src, 11), KCSAND_ORDER_ACQUIRE, "a flush after");
		ASSERT_EQ(mark_src__omp_atomic(src, 19), KCSAND_ORDER_RELAXED, "a flush too far");
		ASSERT_EQ(mark_src__omp_atomic(src, 26), KCSAND_ORDER_RELAXED,
			  "an acquire flush before is no release");
		ASSERT_EQ(mark_src__omp_atomic(src, 32), KCSAND_ORDER_RELAXED,
			  "a release flush after is no acquire");
		mark_src__free(src);
	}

	TEST(source_omp_reduction) {
		struct mark_src *src = mark_src__from_string(
			"  #pragma omp for reduction(+ : total) nowait\n"
			"#pragma omp parallel for num_threads(2)\n"
			"\ttotal += reduction;\n"
			"#pragma omp atomic\n"
			"#pragma omp parallel for reduction(max:m)\n");

		ASSERT_TRUE(src, "source from a string");
		ASSERT_TRUE(mark_src__omp_reduction(src, 1), "a reduction clause, indented");
		ASSERT_FALSE(mark_src__omp_reduction(src, 2), "a pragma with no reduction");
		ASSERT_FALSE(mark_src__omp_reduction(src, 3), "the word outside a pragma");
		ASSERT_FALSE(mark_src__omp_reduction(src, 4), "omp atomic");
		ASSERT_TRUE(mark_src__omp_reduction(src, 5), "parallel for reduction");
		ASSERT_FALSE(mark_src__omp_reduction(src, 6), "past the last line");
		mark_src__free(src);
	}

	TEST(source_plain_assignment) {
		struct mark_src *src = mark_src__from_string(
			"      s = 1;\n"				/* 1: DRB183's store */
			"\tp->done = 1;\n"			/* 2 */
			"\tSET_GIL_DROP_REQUEST(interp);\n"	/* 3: no = */
			"\t_Py_atomic_store_relaxed(&c->x, 1);\n"	/* 4 */
			"\tif (a == b) go();\n"			/* 5: == only */
			"\tn += 2;\n"				/* 6: compound */
			"#pragma omp atomic write\n"
			"\tready = 1;\n"				/* 8 */
			"\tWRITE_ONCE(x, v);\n"			/* 9 */
			"\t*(volatile int *)&f = 1;\n"		/* 10 */
			"\tflag = Release;\n");			/* 11: a word, any case */

		ASSERT_TRUE(mark_src__plain_assignment(src, 1), "s = 1");
		ASSERT_TRUE(mark_src__plain_assignment(src, 2), "through a pointer");
		ASSERT_FALSE(mark_src__plain_assignment(src, 3), "a macro, no =");
		ASSERT_FALSE(mark_src__plain_assignment(src, 4), "atomic inside an identifier");
		ASSERT_FALSE(mark_src__plain_assignment(src, 5), "a comparison");
		ASSERT_FALSE(mark_src__plain_assignment(src, 6), "a compound assignment");
		ASSERT_FALSE(mark_src__plain_assignment(src, 8), "under omp atomic");
		ASSERT_FALSE(mark_src__plain_assignment(src, 9), "WRITE_ONCE");
		ASSERT_FALSE(mark_src__plain_assignment(src, 10), "volatile");
		ASSERT_FALSE(mark_src__plain_assignment(src, 11), "release, in any case");
		ASSERT_FALSE(mark_src__plain_assignment(src, 12), "past the end");
		mark_src__free(src);
	}

	TEST(source_multiline_calls) {
		const char *text = "\tWRITE_ONCE(a,\n\t\t   v + 1);\n"
				   "\tv = READ_ONCE(\n\t\tp->q);\n";

		ASSERT_EQ(at(text, 1, 2, NULL), MARK_KIND_MARKED, "store on the first line");
		ASSERT_EQ(at(text, 2, 6, NULL), MARK_KIND_PLAIN, "value on the second line");
		ASSERT_EQ(at(text, 4, 3, NULL), MARK_KIND_MARKED, "READ_ONCE's argument below it");
		ASSERT_EQ(at(text, 4, 0, NULL), MARK_KIND_MARKED,
			  "no column, call open on the line");
	}

	TEST(source_data_race_wins) {
		const char *tok = NULL;

		ASSERT_EQ(at("\treturn data_race(x);", 1, 0, &tok), MARK_KIND_DATA_RACE,
			  "data_race");
		ASSERT_STREQ(tok, "data_race", "token");
		ASSERT_EQ(at("\tv = data_race(READ_ONCE(x));", 1, 16, NULL), MARK_KIND_DATA_RACE,
			  "data_race around READ_ONCE");
		/* kernel/fork.c:2252 in 6.1: gcc's column is the if's '(' (col 5). */
		ASSERT_EQ(at("\tif (data_race(nr_threads >= max_threads))", 1, 5, NULL),
			  MARK_KIND_DATA_RACE, "data_race opening an if's condition, at its '('");
		ASSERT_EQ(at("\tif (x && data_race(y))", 1, 5, NULL), MARK_KIND_PLAIN,
			  "a condition that only contains one is not wrapped by it");
		ASSERT_EQ(at("\tv = READ_ONCE(x) + data_race(y);", 1, 0, NULL), MARK_KIND_DATA_RACE,
			  "no column: the strongest marker of the line");
	}

	TEST(source_tokens) {
		const char *tok = NULL;

		ASSERT_EQ(at("\treturn atomic_load_explicit(&x, memory_order_relaxed);", 1, 9,
			  &tok),
			  MARK_KIND_MARKED, "atomic_load_explicit");
		ASSERT_STREQ(tok, "atomic_load_explicit", "the token as written");
		ASSERT_EQ(at("\t__atomic_store_n(&x, v, __ATOMIC_RELAXED);", 1, 2, NULL),
			  MARK_KIND_MARKED, "__atomic_store_n");
		ASSERT_EQ(at("\tp = rcu_dereference_protected(q, 1);", 1, 6, NULL),
			  MARK_KIND_MARKED,
			  "rcu_dereference_protected");
		ASSERT_EQ(at("\tv = a.load(std::memory_order_relaxed);", 1, 8, NULL),
			  MARK_KIND_MARKED,
			  ".load(");
		ASSERT_EQ(at("\tv = a->load(std::memory_order_relaxed);", 1, 9, NULL),
			  MARK_KIND_MARKED, "->load(");
		ASSERT_EQ(at("\tv = load(x);", 1, 0, NULL), MARK_KIND_PLAIN, "load( is no method");
		ASSERT_EQ(at("\tv = my_READ_ONCE(x);", 1, 0, NULL), MARK_KIND_PLAIN,
			  "not the token");
		ASSERT_EQ(at("\tv = READ_ONCE_NOCHECK(x);", 1, 0, NULL), MARK_KIND_MARKED,
			  "prefix");
		ASSERT_EQ(at("\tx = y; // READ_ONCE(x)", 1, 0, NULL), MARK_KIND_PLAIN, "comment");
		ASSERT_EQ(at("\tputs(\"READ_ONCE(x)\"); x = 1;", 1, 0, NULL), MARK_KIND_PLAIN,
			  "string");
		ASSERT_EQ(at("/* READ_ONCE(\n x */ y = 1;", 2, 0, NULL), MARK_KIND_PLAIN,
			  "block comment");
	}

	TEST(marks_file_parse) {
		struct mark_rules *r = NULL;
		char msg[512];
		const char *good =
			"# hand-marked accesses\n"
			"\n"
			"stats_read            marked     # a whole function\n"
			"poll+0x1c             data_race\n"
			"lib/counter.c:42      marked\n"
			"std::atomic<int>::load marked\n";

		ASSERT_ZERO(parse_capture(good, &r, msg, sizeof(msg)), "good file");
		ASSERT_STREQ(msg, "", "no message");
		ASSERT_EQ(mark_rules__count(r), 4, "entries");
		ASSERT_EQ(mark_rules__match(r, "stats_read", 0x10, NULL, 0), MARK_KIND_MARKED,
			  "FUNC");
		ASSERT_EQ(mark_rules__match(r, "poll", 0x1c, NULL, 0), MARK_KIND_DATA_RACE,
			  "FUNC+OFF");
		ASSERT_EQ(mark_rules__match(r, "poll", 0x1d, NULL, 0), MARK_KIND_PLAIN,
			  "other offset");
		ASSERT_EQ(mark_rules__match(r, "f", 0, "/src/lib/counter.c", 42), MARK_KIND_MARKED,
			  "FILE:LINE, path suffix");
		ASSERT_EQ(mark_rules__match(r, "f", 0, "/src/xlib/counter.c", 42), MARK_KIND_PLAIN,
			  "FILE:LINE, not on a component boundary");
		ASSERT_EQ(mark_rules__match(r, "f", 0, "/src/lib/counter.c", 43), MARK_KIND_PLAIN,
			  "other line");
		ASSERT_EQ(mark_rules__match(r, "std::atomic<int>::load", 0, NULL, 0),
			  MARK_KIND_MARKED, "C++ name is a FUNC, not FILE:LINE");
		mark_rules__free(r);

		ASSERT_ZERO(parse_capture("f marked\nf data_race\n", &r, msg, sizeof(msg)), "both");
		ASSERT_EQ(mark_rules__match(r, "f", 0, NULL, 0), MARK_KIND_DATA_RACE,
			  "data_race wins");
		mark_rules__free(r);
	}

	TEST(marks_file_errors) {
		static const struct { const char *text, *msg; } bad[] = {
			{ "f marked\nlonely\n", "kcsand: t.marks:2: no kind" },
			{ "f maybe\n", "kcsand: t.marks:1: unknown kind" },
			{ "\n\nf+0xzz marked\n", "kcsand: t.marks:3: bad offset" },
			{ "+0x10 marked\n", "kcsand: t.marks:1: no function before '+'" },
			{ "x.c:0 marked\n", "kcsand: t.marks:1: bad line number" },
			{ "x.c: marked\n", "kcsand: t.marks:1: no line number" },
			{ "f marked extra\n", "kcsand: t.marks:1: trailing text" },
		};
		char msg[512];

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct mark_rules *r = (void *)1;

			ASSERT_EQ(parse_capture(bad[i].text, &r, msg, sizeof(msg)), -EINVAL,
				  bad[i].text);
			ASSERT_TRUE(r == NULL, "no rules on error");
			ASSERT_TRUE(!strncmp(msg, bad[i].msg, strlen(bad[i].msg)), bad[i].msg);
		}
		ASSERT_EQ(mark_rules__load("/nonexistent/marks", &(struct mark_rules *){ NULL }),
			  -ENOENT, "missing file");
	}

	TEST(seqcount_section) {
		struct target_obj *o = NULL;
		struct mark_opts mo = {};
		struct mark_stats ms;
		size_t in = 0, in_marked = 0, outside = 0;

		if (!ASSERT_ZERO(target_obj__open("/proc/self/exe", &o), "open"))
			break;
		ASSERT_TRUE(target_obj__decode(o, "seqfix_*", NULL) == 2, "two fixtures");
		ASSERT_ZERO(mark__apply(o, &mo, &ms), "mark__apply");
		for (size_t i = 0; i < o->sites.n; i++) {
			const struct site *s = &o->sites.v[i];

			if (!strcmp(o->funcs[s->func].name, "seqfix_read_outside")) {
				outside++;
				ASSERT_EQ(s->reason, MARK_NONE, "outside a section: plain");
				continue;
			}
			in++;
			in_marked += s->reason != MARK_NONE;
		}
		ASSERT_EQ(outside, 1, "one site outside");
		ASSERT_TRUE(in >= 3, "the section's sites: two of seq, one of a");
		ASSERT_EQ(in_marked, in, "every site of the section marked");
		target_obj__free(o);
	}

	TEST(rcu_list_macro) {
		struct target_obj *o = NULL;
		struct mark_opts mo = {};
		struct mark_stats ms;
		size_t marked = 0, plain = 0;

		if (!ASSERT_ZERO(target_obj__open("/proc/self/exe", &o), "open"))
			break;
		ASSERT_TRUE(target_obj__decode(o, "rcufix_*", NULL) == 1, "one fixture");
		ASSERT_ZERO(mark__apply(o, &mo, &ms), "mark__apply");
		for (size_t i = 0; i < o->sites.n; i++) {
			if (o->sites.v[i].reason == MARK_SOURCE_MACRO)
				marked++;
			else if (o->sites.v[i].reason == MARK_NONE)
				plain++;
		}
		ASSERT_EQ(marked, 2, "the loop macro's loads of the head and of ->next");
		ASSERT_EQ(plain, 1, "the body's load of ->v");
		target_obj__free(o);
	}

	TEST(apply_on_this_binary) {
		struct mark_rules *r = NULL;
		struct target_obj *o = NULL;
		struct mark_opts mo = {};
		struct mark_stats ms;
		const struct site *s;
		char msg[256];

		ASSERT_ZERO(parse_capture("fixture_write_by_hand marked\n", &r, msg, sizeof(msg)),
			    "marks");
		if (!ASSERT_ZERO(target_obj__open("/proc/self/exe", &o), "open"))
			break;
		ASSERT_TRUE(target_obj__decode(o, "fixture_*", NULL) == 9, "nine fixtures");
		mo.rules = r;
		ASSERT_ZERO(mark__apply(o, &mo, &ms), "mark__apply");
		ASSERT_TRUE(ms.dwarf, "the test binary has DWARF");

		s = site_in(o, "fixture_read_volatile");
		if (ASSERT_TRUE(s, "volatile site")) {
			ASSERT_EQ(s->reason, MARK_QUALIFIER, "volatile: qualifier");
			ASSERT_TRUE(s->desc.flags & KCSAND_SITE_MARKED, "volatile: marked");
		}
		s = site_in(o, "fixture_read_ticks");
		if (ASSERT_TRUE(s, "linker-defined volatile site"))
			ASSERT_EQ(s->reason, MARK_QUALIFIER, "jiffies-like alias: its declaration");
		s = site_in(o, "fixture_read_member_volatile");
		if (ASSERT_TRUE(s, "volatile member site"))
			ASSERT_EQ(s->reason, MARK_QUALIFIER, "volatile member of an array element");
		s = site_in(o, "fixture_read_member_plain");
		if (ASSERT_TRUE(s, "plain member site"))
			ASSERT_EQ(s->reason, MARK_NONE, "plain member of the same struct");
		s = site_in(o, "fixture_read_once");
		if (ASSERT_TRUE(s, "READ_ONCE site"))
			ASSERT_EQ(s->reason, MARK_SOURCE_MACRO, "READ_ONCE: source macro");
		s = site_in(o, "fixture_read_plain");
		if (ASSERT_TRUE(s, "plain site")) {
			ASSERT_EQ(s->reason, MARK_NONE, "plain");
			ASSERT_FALSE(s->desc.flags & KCSAND_SITE_MARKED, "plain: not marked");
		}
		s = site_in(o, "fixture_read_data_race");
		if (ASSERT_TRUE(s, "data_race site")) {
			ASSERT_EQ(s->reason, MARK_SOURCE_MACRO, "data_race: source macro");
			ASSERT_TRUE(s->desc.flags & KCSAND_SITE_DATA_RACE, "data_race flag");
		}
		s = site_in(o, "fixture_write_by_hand");
		if (ASSERT_TRUE(s, "hand-marked site"))
			ASSERT_EQ(s->reason, MARK_MARKS_FILE, "marks file");
		s = site_in(o, "fixture_read_mmio");
		if (ASSERT_TRUE(s, "readl site")) {
			ASSERT_EQ(s->reason, MARK_IO_ACCESSOR, "readl: I/O accessor");
			ASSERT_TRUE(s->desc.flags & KCSAND_SITE_DATA_RACE, "readl: never watched");
		}
		ASSERT_EQ(o->stats.marked, 7, "stats.marked");
		{
			uint64_t counts[MARK_REASON_COUNT] = {}, dr = 0;

			mark__count(o->sites.v, o->sites.n, counts, &dr);
			ASSERT_EQ(counts[MARK_SOURCE_MACRO], 2, "counted source macros");
			ASSERT_EQ(counts[MARK_IO_ACCESSOR], 1, "counted I/O accessors");
			ASSERT_EQ(counts[MARK_NONE], 2, "counted plain");
			ASSERT_EQ(dr, 2, "counted data_race (and I/O)");
		}
		/* Again without the marks file: the hand-marked site is plain again. */
		mo.rules = NULL;
		ASSERT_ZERO(mark__apply(o, &mo, &ms), "mark__apply again");
		s = site_in(o, "fixture_write_by_hand");
		if (ASSERT_TRUE(s, "hand-marked site")) {
			ASSERT_EQ(s->reason, MARK_NONE, "unmarked when the entry is gone");
			ASSERT_FALSE(s->desc.flags & KCSAND_SITE_MARKED, "flag cleared");
		}
		ASSERT_EQ(o->stats.marked, 6, "stats.marked after re-marking");
		target_obj__free(o);
		mark_rules__free(r);
	}

	TEST(kernel_sites_through_their_debug_file) {
		/* The fixtures as a "module" loaded elsewhere: kallsyms names them there. */
		const uint64_t shift = 0xffffffffc0000000ull;
		char path[] = "/tmp/kcsand-test-kallsyms.XXXXXX";
		struct target_obj *o = NULL;
		struct kmark_stats ks;
		struct ksyms *k = NULL;
		const struct site *s;
		FILE *f;
		int fd;

		if (!ASSERT_ZERO(target_obj__open("/proc/self/exe", &o), "open"))
			break;
		ASSERT_TRUE(target_obj__decode(o, "fixture_*", NULL) == 9, "nine fixtures");
		fd = mkstemp(path);
		f = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!ASSERT_TRUE(f, "kallsyms file"))
			break;
		for (size_t i = 0; i < o->nr_funcs; i++) {
			o->funcs[i].vaddr += shift;
			fprintf(f, "%016llx t %s\t[kmtest]\n",
				(unsigned long long)o->funcs[i].vaddr, o->funcs[i].name);
		}
		/* The module's variables, where its code's RIP-relative operands point. */
		fprintf(f, "%016llx d fixture_vol\t[kmtest]\n",
			(unsigned long long)((uintptr_t)&fixture_vol - (uintptr_t)fixture_read_volatile +
					     site_func_vaddr(o, "fixture_read_volatile")));
		fprintf(f, "%016llx d fixture_plain\t[kmtest]\n",
			(unsigned long long)((uintptr_t)&fixture_plain -
					     (uintptr_t)fixture_read_volatile +
					     site_func_vaddr(o, "fixture_read_volatile")));
		for (size_t i = 0; i < o->sites.n; i++)
			o->sites.v[i].vaddr += shift;
		fclose(f);
		k = ksyms__load_file(path);
		if (!ASSERT_TRUE(k, "ksyms"))
			break;
		ASSERT_ZERO(kmark__apply(o, k, path, kmtest_debug, "kmtest", NULL, &ks),
			    "kmark__apply");
		ASSERT_EQ(ks.debug_files, 1, "one debug file");
		ASSERT_EQ(ks.not_found, 0, "every function found by name");
		s = site_in(o, "fixture_read_once");
		if (ASSERT_TRUE(s, "READ_ONCE site"))
			ASSERT_EQ(s->reason, MARK_SOURCE_MACRO, "READ_ONCE: source macro");
		s = site_in(o, "fixture_read_data_race");
		if (ASSERT_TRUE(s, "data_race site"))
			ASSERT_TRUE(s->desc.flags & KCSAND_SITE_DATA_RACE, "data_race flag");
		s = site_in(o, "fixture_read_plain");
		if (ASSERT_TRUE(s, "plain site")) {
			ASSERT_EQ(s->reason, MARK_NONE, "plain");
			ASSERT_FALSE(s->desc.flags & KCSAND_SITE_NOWATCH, "classified: watched");
		}
		s = site_in(o, "fixture_read_mmio");
		if (ASSERT_TRUE(s, "readl site in a module"))
			ASSERT_EQ(s->reason, MARK_IO_ACCESSOR, "readl: I/O accessor");
		ASSERT_EQ(ks.module_nowatch, 0, "module with debug info: every site classified");
		/* No debug file for the module: nothing but the instructions marks. */
		s = site_in(o, "fixture_read_volatile");
		if (ASSERT_TRUE(s, "volatile site"))
			ASSERT_EQ(s->reason, MARK_QUALIFIER, "volatile: qualifier, through kallsyms");
		ASSERT_ZERO(kmark__apply(o, k, path, kmtest_debug, "other", NULL, &ks),
			    "no debug file");
		ASSERT_EQ(ks.no_debug, o->sites.n, "every site counted without debug info");
		ASSERT_EQ(o->stats.marked, 0, "nothing marked");
		/* Any of a driver's unclassified accesses may be a readl(): never watched. */
		ASSERT_EQ(ks.module_nowatch, o->sites.n, "module sites without debug info");
		s = site_in(o, "fixture_read_mmio");
		if (ASSERT_TRUE(s, "readl site without debug info"))
			ASSERT_TRUE(s->desc.flags & KCSAND_SITE_NOWATCH, "never watched");
		unlink(path);
		ksyms__free(k);
		target_obj__free(o);
	}

	return test_summary();
}

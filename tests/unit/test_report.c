// SPDX-License-Identifier: GPL-2.0-only
/* Report layout: KCSAN's, line for line (Documentation/dev-tools/kcsan.rst). */
#include <stdlib.h>
#include "test.h"
#include "report/report.h"
#include "engine/engine_int.h"

static char *render(const struct report_view *v, int json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (json)
		report__print_json(v, f);
	else
		report__print_text(v, f);
	fclose(f);
	return buf;
}

static void side(struct report_side *s, const struct kcsand_access *a, const char *func,
		 const char *top, const char *f1, const char *f2)
{
	memset(s, 0, sizeof(*s));
	s->acc = a;
	snprintf(s->func, sizeof(s->func), "%s", func);
	snprintf(s->top, sizeof(s->top), "%s", top);
	snprintf(s->frames[0], sizeof(s->frames[0]), "%s", f1);
	snprintf(s->frames[1], sizeof(s->frames[1]), "%s", f2);
	s->nr_frames = 2;
}

int main(void)
{
	static struct kcsand_report r;
	static struct report_view v;
	char *out;

	r.has_other = 1;
	r.value_valid = 1;
	r.value_change = KCSAND_VALUE_CHANGE_TRUE;
	r.old_value[0] = 0x9a6;
	r.new_value[0] = 0x9b2;
	r.this = (struct kcsand_access){ .addr = 0xffffffffc009a628ULL, .tid = 488, .pid = 480,
					 .cpu = 6, .size = 8, .type = 0 };
	snprintf(r.this.comm, sizeof(r.this.comm), "access_thread");
	r.other = (struct kcsand_access){ .addr = 0xffffffffc009a628ULL, .tid = 487, .cpu = 0,
					  .size = 8, .type = KCSAND_ACCESS_WRITE };
	v.raw = &r;
	v.system = "kcsand 0.1.0 (user) 6.18.44";
	side(&v.this, &r.this, "test_kernel_read", "test_kernel_read+0x10/0x20",
	     "test_kernel_read+0x10/0x20", "access_thread+0x89/0xd0");
	side(&v.other, &r.other, "test_kernel_write", "test_kernel_write+0x1d/0x30",
	     "test_kernel_write+0x1d/0x30", "access_thread+0x89/0xd0");

	TEST(known_origin_layout) {
		const char *want =
			"==================================================================\n"
			"BUG: KCSAN: data-race in test_kernel_read / test_kernel_write\n"
			"\n"
			"write to 0xffffffffc009a628 of 8 bytes by task 487 on cpu 0:\n"
			" test_kernel_write+0x1d/0x30\n"
			" access_thread+0x89/0xd0\n"
			"\n"
			"read to 0xffffffffc009a628 of 8 bytes by task 488 on cpu 6:\n"
			" test_kernel_read+0x10/0x20\n"
			" access_thread+0x89/0xd0\n"
			"\n"
			"value changed: 0x00000000000009a6 -> 0x00000000000009b2\n"
			"\n"
			"Reported by Kernel Concurrency Sanitizer on:\n"
			"CPU: 6 PID: 480 Comm: access_thread kcsand 0.1.0 (user) 6.18.44\n"
			"==================================================================\n";

		out = render(&v, 0);
		ASSERT_STREQ(out, want, "report text");
		free(out);
	}
	TEST(kernel_footer_pid_is_the_task) {
		/* KCSAN prints the task's own pid (a thread), as in "by task 488". */
		v.footer_tid = true;
		out = render(&v, 0);
		ASSERT_TRUE(strstr(out, "\nCPU: 6 PID: 488 Comm: access_thread ") != NULL,
			    "footer PID is the thread's in kernel mode");
		free(out);
		v.footer_tid = false;
	}
	TEST(json_byte_for_byte) {
		/* The documented layout, as the fprintf version printed it (json-c since). */
		const char *want =
			"{\"title\":\"data-race in test_kernel_read / test_kernel_write\","
			"\"origin\":\"known\",\"accesses\":[{\"type\":\"write\","
			"\"addr\":\"0xffffffffc009a628\",\"size\":8,\"context\":\"task\","
			"\"tid\":487,\"pid\":0,\"cpu\":0,\"comm\":\"\","
			"\"function\":\"test_kernel_write\",\"stack\":[\"test_kernel_write+0x1d/0x30\","
			"\"access_thread+0x89/0xd0\"]},{\"type\":\"read\","
			"\"addr\":\"0xffffffffc009a628\",\"size\":8,\"context\":\"task\","
			"\"tid\":488,\"pid\":480,\"cpu\":6,\"comm\":\"access_thread\","
			"\"function\":\"test_kernel_read\",\"stack\":[\"test_kernel_read+0x10/0x20\","
			"\"access_thread+0x89/0xd0 /src/a \\\"b\\\" \\u0001 \xc3\xa9\"]}],"
			"\"value_old\":\"0x00000000000009a6\",\"value_new\":\"0x00000000000009b2\","
			"\"system\":\"kcsand 0.1.0 (user) 6.18.44\"}\n";

		snprintf(v.this.frames[1], sizeof(v.this.frames[1]),
			 "access_thread+0x89/0xd0 /src/a \"b\" \x01 \xc3\xa9");
		out = render(&v, 1);
		ASSERT_STREQ(out, want, "report JSON");
		free(out);
		snprintf(v.this.frames[1], sizeof(v.this.frames[1]), "access_thread+0x89/0xd0");
	}
	TEST(title_orders_functions) {
		char t[256];

		snprintf(v.this.func, sizeof(v.this.func), "zeta");
		snprintf(v.other.func, sizeof(v.other.func), "alpha");
		report__title(&v, t, sizeof(t));
		ASSERT_STREQ(t, "data-race in alpha / zeta", "lexicographic order");
		snprintf(v.this.func, sizeof(v.this.func), "alpha");
		snprintf(v.other.func, sizeof(v.other.func), "zeta");
		report__title(&v, t, sizeof(t));
		ASSERT_STREQ(t, "data-race in alpha / zeta", "independent of which side watched");
	}
	TEST(access_types) {
		ASSERT_STREQ(report__access_type(0), "read", "read");
		ASSERT_STREQ(report__access_type(KCSAND_ACCESS_WRITE), "write", "write");
		ASSERT_STREQ(report__access_type(KCSAND_ACCESS_WRITE | KCSAND_ACCESS_COMPOUND),
			     "read-write", "rmw");
		ASSERT_STREQ(report__access_type(KCSAND_ACCESS_ATOMIC), "read (marked)", "marked read");
		ASSERT_STREQ(report__access_type(KCSAND_ACCESS_WRITE | KCSAND_ACCESS_COMPOUND |
						KCSAND_ACCESS_ATOMIC),
			     "read-write (marked)", "marked rmw");
	}
	TEST(unknown_origin_layout) {
		r.has_other = 0;
		r.this.size = 4;
		r.old_value[0] = 0x2328;
		r.new_value[0] = 0x2329;
		snprintf(v.this.top, sizeof(v.this.top), "test_kernel_rmw_array+0x71/0xd0");
		out = render(&v, 0);
		ASSERT_TRUE(strstr(out, "BUG: KCSAN: data-race in test_kernel_rmw_array+0x71/0xd0\n\n"
					"race at unknown origin, with read to 0xffffffffc009a628 of 4 "
					"bytes by task 488 on cpu 6:\n") != NULL,
			    "unknown-origin title and access line");
		ASSERT_TRUE(strstr(out, "value changed: 0x00002328 -> 0x00002329\n") != NULL,
			    "value width follows the access size");
		free(out);
	}
	TEST(no_value_line_without_change_or_above_word) {
		r.new_value[0] = r.old_value[0];
		out = render(&v, 0);
		ASSERT_TRUE(strstr(out, "value changed") == NULL, "no line without a change");
		free(out);
		r.new_value[0] = 1;
		r.this.size = 16;
		out = render(&v, 0);
		ASSERT_TRUE(strstr(out, "value changed") == NULL, "no line above 8 bytes");
		free(out);
	}
	TEST(interrupt_context) {
		r.this.ctx = KCSAND_CTX_INTERRUPT;
		r.this.size = 4;
		out = render(&v, 0);
		ASSERT_TRUE(strstr(out, "of 4 bytes by interrupt on cpu 6:") != NULL, "by interrupt");
		free(out);
	}
	TEST(json_is_one_line_and_escaped) {
		snprintf(v.this.frames[0], sizeof(v.this.frames[0]), "f\"q\\x");
		out = render(&v, 1);
		ASSERT_TRUE(strchr(out, '\n') == out + strlen(out) - 1, "one line");
		ASSERT_TRUE(strstr(out, "\"f\\\"q\\\\x\"") != NULL, "quotes and backslashes escaped");
		ASSERT_TRUE(strstr(out, "\"origin\":\"unknown\"") != NULL, "origin");
		free(out);
	}
	/* Issue 10, finding 8: an escalation's catch is a later write, not a pair. */
	TEST(later_write_is_not_a_pair) {
		static struct kcsand_report q;
		static struct report_view u;
		char *txt, *json;

		q.has_other = 1;
		q.value_valid = 1;
		q.value_change = KCSAND_VALUE_CHANGE_TRUE;
		q.this = (struct kcsand_access){ .addr = 0xffffffffc009a628ULL, .tid = 488, .cpu = 6,
						 .size = 8, .type = 0 };
		q.other = (struct kcsand_access){ .addr = 0xffffffffc009a628ULL, .tid = 487, .cpu = 0,
						  .size = 8, .type = KCSAND_ACCESS_WRITE,
						  .flags = KCSAND_ACC_HWBP | KCSAND_ACC_LATER,
						  .after_us = 1234567 };
		u.raw = &q;
		side(&u.this, &q.this, "test_kernel_read", "test_kernel_read+0x10/0x20",
		     "test_kernel_read+0x10/0x20", "access_thread+0x89/0xd0");
		side(&u.other, &q.other, "test_kernel_write", "test_kernel_write+0x1d/0x30",
		     "test_kernel_write+0x1d/0x30", "access_thread+0x89/0xd0");
		txt = render(&u, 0);
		ASSERT_TRUE(strstr(txt, "BUG: KCSAN: later write in test_kernel_write after data-race "
					"in test_kernel_read\n") != NULL, "title");
		ASSERT_TRUE(strstr(txt, "write to 0xffffffffc009a628 of 8 bytes by task 487 on cpu 0, "
					"1234.567 ms after the race below:\n") != NULL, "the write, and when");
		ASSERT_TRUE(strstr(txt, "\nrace at unknown origin, with read to 0xffffffffc009a628 of 8 "
					"bytes by task 488 on cpu 6:\n") != NULL, "the race it follows");
		ASSERT_TRUE(strstr(txt, "data-race in test_kernel_read / test_kernel_write") == NULL,
			    "no pair claimed");
		json = render(&u, 1);
		ASSERT_TRUE(strstr(json, "\"origin\":\"later_write\",\"after_us\":1234567,") != NULL,
			    "JSON origin and delay");
		free(txt);
		free(json);
	}
	/* Issue 10, finding 10: the RCU exemption is the other thread's, as KCSAN's skip_report(). */
	TEST(value_change_only_exempts_the_consumers_rcu) {
		static struct report_view u;
		static struct kcsand_report q;

		q.has_other = 1;
		q.value_change = KCSAND_VALUE_CHANGE_MAYBE;
		u.raw = &q;
		snprintf(u.this.func, sizeof(u.this.func), "reader");
		snprintf(u.other.func, sizeof(u.other.func), "writer");
		ASSERT_TRUE(engine_skip_unchanged(&u, true), "no change, no RCU: skipped");
		ASSERT_FALSE(engine_skip_unchanged(&u, false), "report_value_change_only=0 keeps it");
		snprintf(u.other.func, sizeof(u.other.func), "list_add_rcu");
		ASSERT_FALSE(engine_skip_unchanged(&u, true), "the consumer in RCU code: reported");
		snprintf(u.this.func, sizeof(u.this.func), "rcu_read_thing");
		snprintf(u.other.func, sizeof(u.other.func), "writer");
		ASSERT_TRUE(engine_skip_unchanged(&u, true), "the watcher in RCU code: still skipped");
		q.value_change = KCSAND_VALUE_CHANGE_TRUE;
		ASSERT_FALSE(engine_skip_unchanged(&u, true), "a value change is reported");
	}
	return test_summary();
}

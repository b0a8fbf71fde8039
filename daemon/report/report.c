// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "report.h"

const char *report_access_type(unsigned int type)
{
	switch (type & (KCSAND_ACCESS_WRITE | KCSAND_ACCESS_COMPOUND | KCSAND_ACCESS_ATOMIC)) {
	case 0:
		return "read";
	case KCSAND_ACCESS_ATOMIC:
		return "read (marked)";
	case KCSAND_ACCESS_WRITE:
		return "write";
	case KCSAND_ACCESS_WRITE | KCSAND_ACCESS_ATOMIC:
		return "write (marked)";
	case KCSAND_ACCESS_WRITE | KCSAND_ACCESS_COMPOUND:
		return "read-write";
	case KCSAND_ACCESS_WRITE | KCSAND_ACCESS_COMPOUND | KCSAND_ACCESS_ATOMIC:
		return "read-write (marked)";
	default:
		return "<invalid access type>";
	}
}

int report_title(const struct report_view *v, char *buf, size_t len)
{
	const char *a, *b;

	if (!v->raw->has_other)
		return snprintf(buf, len, "data-race in %s", v->this.top);
	/* KCSAN orders the two functions lexicographically for stable titles. */
	a = v->other.func;
	b = v->this.func;
	if (strcmp(a, b) > 0) {
		const char *t = a;

		a = b;
		b = t;
	}
	return snprintf(buf, len, "data-race in %s / %s", a, b);
}

/* "task PID" or "interrupt", as KCSAN names the context of an access. */
static void access_who(const struct kcsand_access *acc, char *who, size_t len)
{
	if (acc->ctx == KCSAND_CTX_INTERRUPT)
		snprintf(who, len, "interrupt");
	else
		snprintf(who, len, "task %u", acc->tid);
}

static void print_access_line(FILE *out, const char *prefix, const struct kcsand_access *acc)
{
	char who[32];

	access_who(acc, who, sizeof(who));
	fprintf(out, "%s%s to 0x%016" PRIx64 " of %u bytes by %s on cpu %u:\n", prefix,
		report_access_type(acc->type), (uint64_t)acc->addr, acc->size, who, acc->cpu);
}

static void print_stack(FILE *out, const struct report_side *s)
{
	for (int i = 0; i < s->nr_frames; i++)
		fprintf(out, " %s\n", s->frames[i]);
}

static uint64_t value_word(const __u64 *v, unsigned int size)
{
	return size >= 8 ? v[0] : v[0] & ((1ULL << (size * 8)) - 1);
}

int report_print_text(const struct report_view *v, FILE *out)
{
	const struct kcsand_report *r = v->raw;
	const struct kcsand_access *me = &r->this;
	char title[1024];

	report_title(v, title, sizeof(title));
	fprintf(out, "%s\n", REPORT_SEPARATOR);
	fprintf(out, "BUG: KCSAN: %s\n\n", title);
	if (r->has_other) {
		print_access_line(out, "", &r->other);
		print_stack(out, &v->other);
		fprintf(out, "\n");
		print_access_line(out, "", me);
	} else {
		print_access_line(out, "race at unknown origin, with ", me);
	}
	print_stack(out, &v->this);

	if (me->size <= 8 && r->value_valid) {
		uint64_t old = value_word(r->old_value, me->size);
		uint64_t new = value_word(r->new_value, me->size);

		if (old != new) {
			fprintf(out, "\nvalue changed: 0x%0*" PRIx64 " -> 0x%0*" PRIx64 "\n",
				me->size * 2, old, me->size * 2, new);
		}
	}
	/*
	 * kcsand's one addition to the layout, in the footer where parsers of
	 * KCSAN's reports do not look: a side seen by a debug register trapped
	 * after its access, so its first frame is the next instruction.
	 */
	for (int i = 0; i < 2; i++) {
		const struct kcsand_access *a = i ? me : (r->has_other ? &r->other : NULL);
		char who[32];

		if (!a || !(a->flags & KCSAND_ACC_HWBP))
			continue;
		access_who(a, who, sizeof(who));
		fprintf(out, "\nhardware watchpoint: the %s by %s was seen by a debug register, "
			     "after it executed\n", report_access_type(a->type), who);
	}
	fprintf(out, "\nReported by Kernel Concurrency Sanitizer on:\n");
	fprintf(out, "CPU: %u PID: %u Comm: %.16s %s\n", me->cpu, v->footer_tid ? me->tid : me->pid,
		me->comm, v->system ? v->system : "kcsand " KCSAND_VERSION);
	fprintf(out, "%s\n", REPORT_SEPARATOR);
	return ferror(out) ? -EIO : 0;
}

void json_print_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void json_access(FILE *out, const struct report_side *s)
{
	const struct kcsand_access *a = s->acc;

	fprintf(out, "{\"type\":");
	json_print_string(out, report_access_type(a->type));
	fprintf(out, ",\"addr\":\"0x%016" PRIx64 "\",\"size\":%u,\"context\":\"%s\",\"tid\":%u,"
		"\"pid\":%u,\"cpu\":%u,\"comm\":",
		(uint64_t)a->addr, a->size, a->ctx == KCSAND_CTX_INTERRUPT ? "interrupt" : "task",
		a->tid, a->pid, a->cpu);
	json_print_string(out, a->comm);
	fprintf(out, ",\"function\":");
	json_print_string(out, s->func);
	if (a->flags & KCSAND_ACC_HWBP)
		fprintf(out, ",\"hw_watchpoint\":true");
	fprintf(out, ",\"stack\":[");
	for (int i = 0; i < s->nr_frames; i++) {
		if (i)
			fputc(',', out);
		json_print_string(out, s->frames[i]);
	}
	fprintf(out, "]}");
}

int report_print_json(const struct report_view *v, FILE *out)
{
	const struct kcsand_report *r = v->raw;
	char title[1024];

	report_title(v, title, sizeof(title));
	fprintf(out, "{\"title\":");
	json_print_string(out, title);
	fprintf(out, ",\"origin\":\"%s\",\"accesses\":[", r->has_other ? "known" : "unknown");
	if (r->has_other) {
		json_access(out, &v->other);
		fputc(',', out);
	}
	json_access(out, &v->this);
	fputc(']', out);
	if (r->this.size <= 8 && r->value_valid) {
		uint64_t old = value_word(r->old_value, r->this.size);
		uint64_t new = value_word(r->new_value, r->this.size);

		if (old != new)
			fprintf(out, ",\"value_old\":\"0x%0*" PRIx64 "\",\"value_new\":\"0x%0*" PRIx64 "\"",
				r->this.size * 2, old, r->this.size * 2, new);
	}
	fprintf(out, ",\"system\":");
	json_print_string(out, v->system);
	fprintf(out, "}\n");
	return ferror(out) ? -EIO : 0;
}

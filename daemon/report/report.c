// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "report.h"
#include "util/json.h"

const char *report__access_type(unsigned int type)
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

int report__title(const struct report_view *v, char *buf, size_t len)
{
	const char *a, *b;

	if (!v->raw->has_other)
		return snprintf(buf, len, "data-race in %s", v->this.top);
	/* Not a pair: the write an escalation caught after a race of unknown origin. */
	if (report_is_later_write(v->raw))
		return snprintf(buf, len, "later write in %s after data-race in %s", v->other.func,
				v->this.func);
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
	char who[32], when[64] = "";

	access_who(acc, who, sizeof(who));
	if (acc->flags & KCSAND_ACC_LATER)
		snprintf(when, sizeof(when), ", %.3f ms after the race below", acc->after_us / 1e3);
	fprintf(out, "%s%s to 0x%016" PRIx64 " of %u bytes by %s on cpu %u%s:\n", prefix,
		report__access_type(acc->type), (uint64_t)acc->addr, acc->size, who, acc->cpu,
		when);
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

int report__print_text(const struct report_view *v, FILE *out)
{
	const struct kcsand_report *r = v->raw;
	const struct kcsand_access *me = &r->this;
	char title[1024];

	report__title(v, title, sizeof(title));
	fprintf(out, "%s\n", REPORT_SEPARATOR);
	fprintf(out, "BUG: KCSAN: %s\n\n", title);
	if (r->has_other) {
		print_access_line(out, "", &r->other);
		print_stack(out, &v->other);
		fprintf(out, "\n");
		print_access_line(out, report_is_later_write(r) ? "race at unknown origin, with " : "",
				  me);
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
	 * kcsand's additions to the layout, in the footer where parsers of
	 * KCSAN's reports do not look: a side seen by a debug register trapped
	 * after its access (its frame is the access where it was decoded); a
	 * report of the history detector names how far apart the accesses were.
	 */
	for (int i = 0; i < 2; i++) {
		const struct kcsand_access *a = i ? me : (r->has_other ? &r->other : NULL);
		char who[32];

		if (!a || !(a->flags & KCSAND_ACC_HWBP))
			continue;
		access_who(a, who, sizeof(who));
		fprintf(out, "\nhardware watchpoint: the %s by %s was seen by a debug register%s, "
			     "after it executed\n", report__access_type(a->type), who,
			(a->flags & KCSAND_ACC_PAIR) ? " during the watcher's stall" : "");
	}
	if (r->origin == KCSAND_ORIGIN_HISTORY)
		fprintf(out, "\nprevious access %.1f ms earlier, not ordered by any synchronization "
			     "kcsand saw\n", r->age_ns / 1e6);
	fprintf(out, "\nReported by Kernel Concurrency Sanitizer on:\n");
	fprintf(out, "CPU: %u PID: %u Comm: %.16s %s\n", me->cpu, v->footer_tid ? me->tid : me->pid,
		me->comm, v->system ? v->system : "kcsand " KCSAND_VERSION);
	fprintf(out, "%s\n", REPORT_SEPARATOR);
	return ferror(out) ? -EIO : 0;
}

static struct json_object *json_access(const struct report_side *s)
{
	const struct kcsand_access *a = s->acc;
	struct json_object *o = json_object_new_object(), *stack = json_object_new_array();
	char addr[32];

	snprintf(addr, sizeof(addr), "0x%016" PRIx64, (uint64_t)a->addr);
	json__add(o, "type", json__string(report__access_type(a->type)));
	json__add(o, "addr", json__string(addr));
	json__add(o, "size", json_object_new_int64(a->size));
	json__add(o, "context", json__string(a->ctx == KCSAND_CTX_INTERRUPT ? "interrupt" : "task"));
	json__add(o, "tid", json_object_new_int64(a->tid));
	json__add(o, "pid", json_object_new_int64(a->pid));
	json__add(o, "cpu", json_object_new_int64(a->cpu));
	json__add(o, "comm", json__string(a->comm));
	json__add(o, "function", json__string(s->func));
	if (a->flags & KCSAND_ACC_HWBP)
		json__add(o, "hw_watchpoint", json_object_new_boolean(1));
	for (int i = 0; i < s->nr_frames; i++)
		json_object_array_add(stack, json__string(s->frames[i]));
	json__add(o, "stack", stack);
	return o;
}

/* The value change, as hex of the access's width; nothing when it did not change. */
static void json_values(struct json_object *o, const struct kcsand_report *r)
{
	uint64_t old, new;
	char buf[32];

	if (r->this.size > 8 || !r->value_valid)
		return;
	old = value_word(r->old_value, r->this.size);
	new = value_word(r->new_value, r->this.size);
	if (old == new)
		return;
	snprintf(buf, sizeof(buf), "0x%0*" PRIx64, r->this.size * 2, old);
	json__add(o, "value_old", json__string(buf));
	snprintf(buf, sizeof(buf), "0x%0*" PRIx64, r->this.size * 2, new);
	json__add(o, "value_new", json__string(buf));
}

int report__print_json(const struct report_view *v, FILE *out)
{
	const struct kcsand_report *r = v->raw;
	struct json_object *o = json_object_new_object(), *acc = json_object_new_array();
	char title[1024];
	int ret;

	report__title(v, title, sizeof(title));
	json__add(o, "title", json__string(title));
	json__add(o, "origin", json__string(report_is_later_write(r) ? "later_write"
					    : r->has_other ? "known" : "unknown"));
	if (report_is_later_write(r))
		json__add(o, "after_us", json_object_new_int64(r->other.after_us));
	if (r->has_other)
		json_object_array_add(acc, json_access(&v->other));
	json_object_array_add(acc, json_access(&v->this));
	json__add(o, "accesses", acc);
	json_values(o, r);
	/* Only on history's reports: a watchpoint's stays byte for byte as documented. */
	if (r->origin == KCSAND_ORIGIN_HISTORY) {
		json__add(o, "found_by", json__string("history"));
		json__add(o, "previous_access_ns_earlier", json_object_new_int64(r->age_ns));
	}
	json__add(o, "system", json__string(v->system));
	ret = json__print(out, o);
	fputc('\n', out);
	return ret ? ret : ferror(out) ? -EIO : 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reports in KCSAN's layout (kernel/kcsan/report.c, Documentation/dev-tools/
 * kcsan.rst), byte for byte where the kernel's format applies, so that
 * syzkaller's parser, decode_stacktrace.sh and grep-based summaries work.
 * This module only formats: the engine symbolizes and filters first.
 */
#ifndef KCSAND_REPORT_H
#define KCSAND_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "kcsand.h"

#define REPORT_SEPARATOR \
	"=================================================================="
#define REPORT_FRAME_LEN 512
#define REPORT_MAX_FRAMES (KCSAND_MAX_STACK + 1)

/* One side of a race, symbolized. */
struct report_side {
	const struct kcsand_access *acc;
	char func[256];				/* top frame's function, for the title */
	char top[REPORT_FRAME_LEN];		/* top frame as func+0xoff/0xsize */
	int nr_frames;
	char frames[REPORT_MAX_FRAMES][REPORT_FRAME_LEN];	/* " func+0x../0x.. file:line" text */
};

struct report_view {
	const struct kcsand_report *raw;
	struct report_side this;
	struct report_side other;		/* used when raw->has_other */
	const char *system;			/* footer tail, e.g. "kcsand 0.1.0 (user) 6.18.44" */
	/*
	 * The footer's PID: KCSAN's is the task's own (a thread); kernel
	 * mode prints that, user mode the process, the program's pid.
	 */
	bool footer_tid;
};

/*
 * An escalation's report: the race's watcher and the next write to its
 * address, seen later by a debug register; not a concurrent pair.
 */
static inline bool report_is_later_write(const struct kcsand_report *r)
{
	return r->has_other && (r->other.flags & KCSAND_ACC_LATER);
}

/* "read", "write (marked)", "read-write", ... as KCSAN's get_access_type(). */
const char *report__access_type(unsigned int type);
/* The title after "BUG: KCSAN: ", e.g. "data-race in reader / writer". */
int report__title(const struct report_view *v, char *buf, size_t len);
/* Print the report as KCSAN does; returns 0 or a negative errno. */
int report__print_text(const struct report_view *v, FILE *out);
/* Print the report as one JSON object on one line. */
int report__print_json(const struct report_view *v, FILE *out);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One way out for the subsystems' messages, as libbpf_set_print() is for
 * libbpf's: every message goes through the print function, stderr unless
 * the program sets another.  The service sets one that also keeps the
 * last warning, the reason a call failed, for the client that asked.
 * Functions still return -errno; the message names the object and why.
 *
 * Levels, as libbpf's: a warning is always shown; info (-v) says what was
 * done and how long it took; debug (-vv) is a line per site, per sampler
 * period or per libbpf step.  The print function filters by level, so
 * the subsystems print without asking how verbose the program is.
 */
#ifndef KCSAND_PRINT_H
#define KCSAND_PRINT_H

#include <stdarg.h>
#include <stdbool.h>

enum kcsand_print_level {
	KCSAND_WARN,
	KCSAND_INFO,
	KCSAND_DEBUG,
};

typedef int (*kcsand_print_fn_t)(enum kcsand_print_level level, const char *fmt, va_list ap);

/* Route every message to fn (NULL: stderr); returns the previous function. */
kcsand_print_fn_t kcsand__set_print(kcsand_print_fn_t fn);
/* Show warnings, and with verbose (the count of -v) 1 info too, 2 debug too. */
void kcsand__set_verbose(int verbose);
/* Whether a message of this level is shown: for a print function, and work done only to print. */
bool kcsand__print_level_on(enum kcsand_print_level level);
__attribute__((format(printf, 2, 3)))
void kcsand__print(enum kcsand_print_level level, const char *fmt, ...);
void kcsand__vprint(enum kcsand_print_level level, const char *fmt, va_list ap);

/* A line of its own, "kcsand: " first, as the daemon's messages always were. */
#define pr_warn(fmt, ...) kcsand__print(KCSAND_WARN, "kcsand: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) kcsand__print(KCSAND_INFO, "kcsand: " fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) kcsand__print(KCSAND_DEBUG, "kcsand: " fmt, ##__VA_ARGS__)
/* The same, at a level chosen at run time (the first of a kind a warning, the rest info). */
#define pr_at(level, fmt, ...) kcsand__print(level, "kcsand: " fmt, ##__VA_ARGS__)
/* The rest of a line begun by pr_warn() (no prefix). */
#define pr_cont(fmt, ...) kcsand__print(KCSAND_WARN, fmt, ##__VA_ARGS__)

#endif

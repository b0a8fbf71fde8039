// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include "print.h"

/* Set once, before the threads that print (the breakpoint movers) start. */
static enum kcsand_print_level print_max = KCSAND_WARN;

void kcsand__set_verbose(int verbose)
{
	print_max = verbose >= 2 ? KCSAND_DEBUG : verbose ? KCSAND_INFO : KCSAND_WARN;
}

bool kcsand__print_level_on(enum kcsand_print_level level)
{
	return level <= print_max;
}

static int print_stderr(enum kcsand_print_level level, const char *fmt, va_list ap)
{
	if (!kcsand__print_level_on(level))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static kcsand_print_fn_t print_fn = print_stderr;

kcsand_print_fn_t kcsand__set_print(kcsand_print_fn_t fn)
{
	kcsand_print_fn_t old = print_fn;

	print_fn = fn ? fn : print_stderr;
	return old;
}

void kcsand__print(enum kcsand_print_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_fn(level, fmt, ap);
	va_end(ap);
}

void kcsand__vprint(enum kcsand_print_level level, const char *fmt, va_list ap)
{
	print_fn(level, fmt, ap);
}

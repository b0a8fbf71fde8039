// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include "print.h"

static int print_stderr(enum kcsand_print_level level, const char *fmt, va_list ap)
{
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

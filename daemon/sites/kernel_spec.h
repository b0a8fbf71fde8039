/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The syntax of a kernel probe spec (ktarget.h): GLOB, module:NAME,
 * src:PATH, FUNC+0xOFF or !GLOB.  A pure check, so that the configuration and the
 * socket's request parsers (and their fuzzers) refuse a bad spec as they
 * read it, before anything looks at the kernel; ktarget.c parses with
 * the same rules.
 */
#ifndef KCSAND_KERNEL_SPEC_H
#define KCSAND_KERNEL_SPEC_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A kallsyms name is at most 128 bytes; room for the rest. */
#define KERNEL_SPEC_MAX_LEN	255

/* Why s is not a spec, or NULL when it is one. */
static inline const char *kernel_spec__invalid(const char *s)
{
	const char *plus;
	char *end;

	if (!*s)
		return "empty";
	if (strlen(s) > KERNEL_SPEC_MAX_LEN)
		return "too long";
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return "white space or a control character";
	if (*s == '!')
		return s[1] ? NULL : "'!' needs a GLOB after it";
	if (!strncmp(s, "module:", 7))
		return s[7] ? NULL : "module: needs a module's NAME after it";
	if (!strncmp(s, "src:", 4))
		return s[4] ? NULL : "src: needs a source PATH after it";
	plus = strchr(s, '+');
	if (!plus)
		return NULL;
	if (plus == s)
		return "FUNC+0xOFF needs a FUNC";
	if (plus[1] < '0' || plus[1] > '9')
		return "FUNC+0xOFF needs a number after '+'";
	errno = 0;
	strtoull(plus + 1, &end, 0);
	return errno || *end ? "FUNC+0xOFF needs a number after '+'" : NULL;
}

/* Does a list of specs choose anything?  Exclusions alone never do. */
static inline bool kernel_specs__select(const char *const *specs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (specs[i][0] != '!')
			return true;
	return false;
}

#endif

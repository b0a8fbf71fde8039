// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench/func_line: the cost of symbolizer__lookup_func_line(), the lookup
 * by function name that gives kernel report frames (vmlinux, .ko) their
 * file:line.  Takes LOOKUPS function names spread over ELF's symbol table
 * and looks each up at offset 1 as a return address, as a report frame does,
 * twice: the first pass also reads each function's line table (libdw keeps
 * it), the second is what a frame costs once its unit has been seen.
 *
 *   func_line ELF [LOOKUPS]
 * prints: function symbols, the first lookup (opens the file), the mean of
 * each pass, and a checksum of what was found (equal for equal results).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "report/symbolize.h"
#include "sites/elf_symbols.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct names {
	char **v;
	size_t n;
};

static int add_name(const struct elf_symbol *s, void *arg)
{
	struct names *nm = arg;

	if (!nm->v && !(nm->v = calloc(s->nr ? s->nr : 1, sizeof(*nm->v))))
		return -ENOMEM;
	if (GELF_ST_TYPE(s->sym.st_info) == STT_FUNC && s->sym.st_shndx != SHN_UNDEF &&
	    s->name && *s->name)
		nm->v[nm->n++] = strdup(s->name);
	return 0;
}

/* The names of ELF's defined STT_FUNC symbols, in symbol-table order. */
static char **func_names(const char *path, size_t *n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct names nm = { 0 };
	Elf *elf;

	*n = 0;
	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf) {
		elf_symbols__each(elf, ELF_SYMTAB, add_name, &nm);
		elf_end(elf);
	}
	close(fd);
	*n = nm.n;
	return nm.v;
}

int main(int argc, char **argv)
{
	struct symbolizer *s;
	struct sym_info si;
	size_t n, lookups, found = 0;
	unsigned long long sum = 0;
	double t0, first_ms, pass_ms[2];
	char **names;

	if (argc < 2) {
		fprintf(stderr, "usage: func_line ELF [LOOKUPS]\n");
		return 2;
	}
	lookups = argc > 2 ? strtoul(argv[2], NULL, 0) : 1000;
	names = func_names(argv[1], &n);
	if (!names || !n || lookups < 2) {
		fprintf(stderr, "func_line: %s: no function symbols in .symtab (or LOOKUPS < 2)\n",
			argv[1]);
		return 1;
	}
	s = symbolizer__new();
	if (!s)
		return 1;

	t0 = now_ms();
	symbolizer__lookup_func_line(s, argv[1], names[0], 1, true, &si);
	first_ms = now_ms() - t0;

	for (int pass = 0; pass < 2; pass++) {
		t0 = now_ms();
		for (size_t k = 1; k < lookups; k++) {
			const char *name = names[(size_t)((unsigned long long)k * n / lookups) % n];

			if (symbolizer__lookup_func_line(s, argv[1], name, 1, true, &si) ||
			    !si.file)
				continue;
			found++;
			for (const char *p = si.file; *p; p++)
				sum = sum * 131 + (unsigned char)*p;
			sum = sum * 131 + (unsigned int)si.line;
		}
		pass_ms[pass] = now_ms() - t0;
	}

	printf("%zu function symbols; first lookup (opens the file) %.1f ms; %zu lookups: "
	       "%.2f us each with line tables read, %.2f us each again; %zu with file:line, "
	       "checksum %016llx\n",
	       n, first_ms, lookups - 1, pass_ms[0] * 1e3 / (double)(lookups - 1),
	       pass_ms[1] * 1e3 / (double)(lookups - 1), found / 2, sum);
	symbolizer__free(s);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return 0;
}

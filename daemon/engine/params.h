/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Parameters and counters by name: the one table that `kcsanctl run`'s
 * options, the configuration file and the control socket all read,
 * generated from include/kcsand_params.h's list.  Each
 * parameter has a name, a range, a default per mode (user, kernel) and a
 * line of help; each front end only reads its own syntax and hands the
 * number to the engine by id.
 */
#ifndef KCSAND_PARAMS_H
#define KCSAND_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "kcsand.h"

enum param_mode {
	PARAM_MODE_USER,
	PARAM_MODE_KERNEL,
	PARAM_NR_MODES,
};

/* In the table's order (include/kcsand_params.h), which is also `get`'s and `--param help`'s. */
#define PARAM_ENUM(ID, name, lo, hi, user, kernel, kind, help) PARAM_##ID,
enum param_id {
	KCSAND_PARAMS(PARAM_ENUM)
	PARAM_COUNT,
};
#undef PARAM_ENUM

struct param_desc {
	const char *name;
	enum param_id id;
	unsigned int min, max;
	unsigned int def[PARAM_NR_MODES];
	const char *help;
	bool at_load;		/* sizes the BPF object: read when an engine loads, never live */
};

/* A parameter's value in each mode: what the engine's options carry. */
struct param_values {
	unsigned int v[PARAM_COUNT];
};

/*
 * A number in [min, max], decimal or 0x-hex, starting with a digit (no sign,
 * no space) and nothing after it: 0, or -EINVAL.  The configuration file, the
 * control socket and --param all read numbers through it.
 */
int uint__parse(const char *w, unsigned long min, unsigned long max, unsigned long *out);
const struct param_desc *param__find(const char *name);
const struct param_desc *param__table(size_t *n);
static inline enum param_mode param__mode(bool kernel)
{
	return kernel ? PARAM_MODE_KERNEL : PARAM_MODE_USER;
}
/* Every parameter at its default for mode. */
void param_values__init(struct param_values *pv, enum param_mode mode);
/*
 * Parse text as a value of p: 0, or -EINVAL with "NAME: bad value 'TEXT'
 * (expected LO..HI)" in err.
 */
int param__parse(const struct param_desc *p, const char *text, unsigned int *out, char *err,
		size_t errlen);
/* The same for "NAME=VALUE" (--param): the descriptor in *pp, or -EINVAL with err. */
int param__parse_kv(const char *kv, const struct param_desc **pp, unsigned int *out, char *err,
		   size_t errlen);
/* The list for `--param help`: name, range, default per mode, help. */
void param__print_all(FILE *out);

/* KCSAN's debugfs names for the counters, then kcsand's own (include/kcsand.h's lists). */
const char *counter__name(enum kcsand_counter c);

#endif

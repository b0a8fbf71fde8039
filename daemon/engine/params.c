// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "params.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* The defaults, and why they are what they are: include/kcsand_params.h. */
#define PARAM_DESC(ID, n, lo, hi, user, kernel, kind, text)			\
	[PARAM_##ID] = { .name = #n, .id = PARAM_##ID, .min = lo, .max = hi,	\
			 .def = { user, kernel }, .help = text,			\
			 .at_load = PARAM_AT_LOAD_##kind },
#define PARAM_AT_LOAD_BPF	false
#define PARAM_AT_LOAD_DAEMON	false
#define PARAM_AT_LOAD_LOAD	true
static const struct param_desc params_table[] = {
	KCSAND_PARAMS(PARAM_DESC)
};
#undef PARAM_DESC

_Static_assert(N_ELEMS(params_table) == PARAM_COUNT, "a description for every parameter");

const struct param_desc *param__table(size_t *n)
{
	*n = N_ELEMS(params_table);
	return params_table;
}

const struct param_desc *param__find(const char *name)
{
	for (size_t i = 0; i < N_ELEMS(params_table); i++)
		if (!strcmp(params_table[i].name, name))
			return &params_table[i];
	return NULL;
}

void param_values__init(struct param_values *pv, enum param_mode mode)
{
	for (size_t i = 0; i < N_ELEMS(params_table); i++)
		pv->v[i] = params_table[i].def[mode];
}

int uint__parse(const char *w, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (*w < '0' || *w > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(w, &end, 0);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int param__parse(const struct param_desc *p, const char *text, unsigned int *out, char *err,
		size_t errlen)
{
	unsigned long v;

	if (uint__parse(text, p->min, p->max, &v)) {
		snprintf(err, errlen, "%s: bad value '%.64s' (expected %u..%u)", p->name, text,
			 p->min, p->max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int param__parse_kv(const char *kv, const struct param_desc **pp, unsigned int *out, char *err,
		   size_t errlen)
{
	const char *eq = strchr(kv, '=');
	char name[64];

	if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(name)) {
		snprintf(err, errlen, "parameter wants NAME=VALUE, got '%.64s'", kv);
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(eq - kv), kv);
	*pp = param__find(name);
	if (!*pp) {
		snprintf(err, errlen, "unknown parameter '%s'", name);
		return -EINVAL;
	}
	return param__parse(*pp, eq + 1, out, err, errlen);
}

void param__print_all(FILE *out)
{
	fprintf(out, "Parameters (NAME=VALUE), with their defaults in user and kernel mode:\n");
	for (size_t i = 0; i < N_ELEMS(params_table); i++) {
		const struct param_desc *p = &params_table[i];
		char def[40];

		if (p->def[PARAM_MODE_USER] == p->def[PARAM_MODE_KERNEL])
			snprintf(def, sizeof(def), "%u", p->def[PARAM_MODE_USER]);
		else
			snprintf(def, sizeof(def), "%u, kernel %u", p->def[PARAM_MODE_USER],
				 p->def[PARAM_MODE_KERNEL]);
		fprintf(out, "  %-28s %u..%u  default %s: %s\n", p->name, p->min, p->max, def,
			p->help);
	}
}

#define COUNTER_NAME(ID, name) [KCSAND_CTR_##ID] = #name,
static const char *const counter_names[] = {
	KCSAND_KCSAN_COUNTERS(COUNTER_NAME)
	KCSAND_OWN_COUNTERS(COUNTER_NAME)
};
#undef COUNTER_NAME

_Static_assert(N_ELEMS(counter_names) == KCSAND_CTR_COUNT, "a name for every counter");

const char *counter__name(enum kcsand_counter c)
{
	return (unsigned int)c < KCSAND_CTR_COUNT ? counter_names[c] : "?";
}

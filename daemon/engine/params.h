/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Parameters and counters by name: the one table that --param, the
 * configuration file and the control socket all read.
 */
#ifndef KCSAND_PARAMS_H
#define KCSAND_PARAMS_H

#include <stddef.h>
#include <stdio.h>
#include "kcsand.h"

/* Where a parameter lives: the BPF object's live .data, or the daemon. */
enum param_home {
	PARAM_BPF,		/* a __u32 in struct kcsand_params, at offset */
	PARAM_OPTS,		/* an unsigned int in struct engine_opts, at offset (daemon-side) */
};

struct param_desc {
	const char *name;
	enum param_home home;
	size_t offset;
	unsigned int min, max;
	const char *help;
};

/*
 * A number in [min, max], decimal or 0x-hex, starting with a digit (no sign,
 * no space) and nothing after it: 0, or -EINVAL.  The configuration file, the
 * control socket and --param all read numbers through it.
 */
int parse_uint(const char *w, unsigned long min, unsigned long max, unsigned long *out);
const struct param_desc *param_find(const char *name);
const struct param_desc *params_all(size_t *n);
/* Parse value for p, with a message naming p and its range on stderr; -EINVAL if bad. */
int param_parse(const struct param_desc *p, const char *value, unsigned int *out);
void params_print(FILE *out);

/* KCSAN's debugfs names for the counters, then kcsand's own. */
const char *counter_name(enum kcsand_counter c);

#endif

// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the configuration parser: any text must parse or
 * fail with a message that names the file and line, never crash or leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "service/config.h"
#include "sites/kernel_spec.h"
#include "hw/watch_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct watch_spec ws;
	struct config c;
	char err[512];
	int ret;

	config__init(&c);
	ret = config__parse((const char *)data, size, "fuzz.conf", &c, err, sizeof(err));
	if (ret && strncmp(err, "fuzz.conf:", 10))
		abort();	/* every error names the file */
	if (!ret) {
		/* Filter files come after the main file: run their parser on the same text. */
		filter__load_text(&c.filter, (const char *)data, size, "fuzz.filter", err,
				  sizeof(err));
		for (size_t i = 0; i < c.nr_targets; i++) {
			const struct config_target *t = &c.targets[i];
			const char *specs[CONFIG_MAX_SPECS];
			char buf[CONFIG_MAX_LINE];
			int n;

			if (!t->kernel) {
				if (!t->binary || t->binary[0] != '/')
					abort();
				continue;
			}
			/* What the service hands engine__add_kernel(): valid specs, not only '!'. */
			n = config__split_specs(t->specs, buf, sizeof(buf), specs, CONFIG_MAX_SPECS);
			if (t->binary || n <= 0 || !kernel_specs__select(specs, n))
				abort();
			for (int j = 0; j < n; j++)
				if (kernel_spec__invalid(specs[j]))
					abort();
		}
		/* What service_add_watch() is handed: a valid SPEC, a user pid or the kernel. */
		if (c.nr_watches > CONFIG_MAX_WATCHES)
			abort();
		for (size_t i = 0; i < c.nr_watches; i++)
			if (!c.watches[i].spec || watch_spec__parse(c.watches[i].spec, &ws) ||
			    c.watches[i].pid < 0 || (c.watches[i].kernel && c.watches[i].pid))
				abort();
		for (size_t i = 0; i < c.nr_kernel_debug; i++)
			if (c.kernel_debug[i][0] != '/')
				abort();
	}
	config__free(&c);
	return 0;
}

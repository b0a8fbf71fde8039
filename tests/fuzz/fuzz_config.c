// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the configuration parser: any text must parse or
 * fail with a message that names the file and line, never crash or leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c;
	char err[512];
	int ret;

	config_init(&c);
	ret = config_parse((const char *)data, size, "fuzz.conf", &c, err, sizeof(err));
	if (ret && strncmp(err, "fuzz.conf:", 10))
		abort();	/* every error names the file */
	if (!ret) {
		/* Filter files come after the main file: run their parser on the same text. */
		filter__load_text(&c.filter, (const char *)data, size, "fuzz.filter", err,
				  sizeof(err));
		for (size_t i = 0; i < c.nr_targets; i++)
			if (!c.targets[i].binary || c.targets[i].binary[0] != '/')
				abort();
	}
	config_free(&c);
	return 0;
}

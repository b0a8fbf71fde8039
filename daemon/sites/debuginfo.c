// SPDX-License-Identifier: GPL-2.0-only
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debuginfo.h"

static char *debuginfo_path;
static Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};
static pthread_once_t path_once = PTHREAD_ONCE_INIT;

/*
 * libdwfl's path: "" is the file's own directory, ".debug" a folder of it,
 * an absolute entry a root searched by build-id and by the file's path.
 * This is elfutils' default with the root replaced.
 */
static void path_init(void)
{
	const char *root = getenv("KCSAND_DEBUG_ROOT");
	static char buf[PATH_MAX + 16];

	if (!root || !*root)
		root = "/usr/lib/debug";
	snprintf(buf, sizeof(buf), ":.debug:%s", root);
	debuginfo_path = buf;
}

const Dwfl_Callbacks *debuginfo__offline_callbacks(void)
{
	pthread_once(&path_once, path_init);
	return &offline_callbacks;
}

int debuginfo__anon_name(const char *path, uint64_t vaddr, char *buf, size_t len)
{
	char *real = realpath(path, NULL);
	const char *use = real ? real : path, *base = strrchr(use, '/');
	int n = snprintf(buf, len, "%s@0x%" PRIx64, base ? base + 1 : use, vaddr);

	free(real);
	return n;
}
